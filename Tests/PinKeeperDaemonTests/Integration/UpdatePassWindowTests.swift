import Foundation
@testable import PinKeeperDaemon
import Synchronization
import TestSupport
import Testing

/// `UpdatePass` bounds transfers, not stores: the next transfer starts as soon as one ends (a
/// sliding window, not waves that wait for their slowest member), and a store's file work after
/// its fetch does not keep the next store's fetch waiting.
@Suite("Update pass window")
struct UpdatePassWindowTests {
    /// Fails every fetch at once (only fetches are observed), except, when `holdingFirst`, the
    /// first one to start, which waits until `release()`; counts fetches in flight.
    final class ScriptedFetcher: HTTPFetching {
        private struct State {
            var started: [String] = []
            var inFlight = 0
            var peak = 0
            var released = false
        }
        private let state = Mutex(State())
        let holdingFirst: Bool
        init(holdingFirst: Bool = false) { self.holdingFirst = holdingFirst }

        var started: [String] { state.withLock { $0.started } }
        var peak: Int { state.withLock { $0.peak } }
        func release() { state.withLock { $0.released = true } }

        func fetch(_ request: HTTPRequest) async throws(UpdateFailure) -> HTTPResponse {
            let held = state.withLock { state in
                defer { state.started.append(request.url) }
                state.inFlight += 1
                state.peak = max(state.peak, state.inFlight)
                return holdingFirst && state.started.isEmpty
            }
            defer { state.withLock { $0.inFlight -= 1 } }
            while held && !state.withLock({ $0.released }) {
                try? await Task.sleep(for: .milliseconds(10))
            }
            throw UpdateFailure(.networkError, "scripted failure")
        }
    }

    static func stores(_ sandbox: Sandbox, count: Int) throws -> [StoreConfig] {
        try (0..<count).map { try sandbox.store("s\($0)", url: "https://127.0.0.1:1/\($0)") }
    }

    @Test("with two transfers at once, the third store's fetch starts while the first is still held", .timeLimit(.minutes(1)))
    func slidingWindow() async throws {
        let sandbox = try Sandbox()
        let fetcher = ScriptedFetcher(holdingFirst: true)
        let stores = try Self.stores(sandbox, count: 3)
        let pass = Task(executorPreference: DaemonTestPool.shared) {
            await UpdatePass.run(stores, updater: sandbox.updater(fetcher: fetcher), concurrency: 2)
        }

        // A window of two slides: the third starts when the second ends, while the first is held.
        #expect(await eventually(timeout: 20) { fetcher.started.count == 3 }, "started: \(fetcher.started)")
        fetcher.release()
        let reports = await pass.value
        #expect(reports.map(\.store) == ["s0", "s1", "s2"])
        #expect(reports.allSatisfy { $0.result == .networkError })
        #expect(fetcher.peak == 2)
    }

    @Test("a store's state save hanging in fsync does not hold the only transfer slot", .timeLimit(.minutes(1)))
    func fileWorkDoesNotHoldATransferSlot() async throws {
        let sandbox = try Sandbox()
        let fetcher = ScriptedFetcher()
        let disk = StalledFileSystem()
        var updater = sandbox.updater(fetcher: fetcher)
        updater.state = StateDirectory(path: sandbox.state.path, writer: AtomicWriter(fileSystem: disk))
        let stores = try Self.stores(sandbox, count: 2)
        let pass = Task(executorPreference: DaemonTestPool.shared) { [updater] in
            await UpdatePass.run(stores, updater: updater, concurrency: 1)
        }

        // The first store's failure is being saved (its fsync hangs) while the second fetches.
        #expect(
            await eventually(timeout: 20) { fetcher.started.count == 2 && disk.stalled >= 1 },
            "started: \(fetcher.started), stalled: \(disk.stalled)")
        disk.open()
        let reports = await pass.value
        #expect(reports.allSatisfy { $0.result == .networkError })
        #expect(sandbox.savedState("s0").consecutiveFailures == 1)
        #expect(sandbox.savedState("s1").consecutiveFailures == 1)
        #expect(fetcher.peak == 1)
    }
}
