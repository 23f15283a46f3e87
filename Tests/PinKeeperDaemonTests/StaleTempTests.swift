import Foundation
import Glibc
@testable import PinKeeperDaemon
import Synchronization
import TestSupport
import Testing

/// A temp file belongs to a live writer unless kill(pid, 0) proves the pid gone: EPERM means
/// the process exists but is another user's, and its file must survive.
@Suite("Stale temp files")
struct StaleTempTests {
    @Test func onlyESRCHMeansTheWriterIsGone() {
        #expect(AtomicWriter.writerIsAlive(killResult: 0, error: 0))
        #expect(AtomicWriter.writerIsAlive(killResult: -1, error: EPERM))
        #expect(!AtomicWriter.writerIsAlive(killResult: -1, error: ESRCH))
    }

    @Test("init's temp file is kept; a temp of a pid that does not exist is removed")
    func realProcesses() throws {
        let dir = TestEnvironment.temporaryDirectory("stale")
        defer { try? FileManager.default.removeItem(at: dir) }
        let prefix = AtomicWriter.tempPrefix(for: "a.json")
        let live = dir.appendingPathComponent(prefix + "1-42")  // pid 1 exists; not ours unless we are root
        let gone = dir.appendingPathComponent(prefix + "\(Int32.max)-42")  // above pid_max, never a process
        for file in [live, gone] { try Data("x".utf8).write(to: file) }
        AtomicWriter.removeStaleTemps(for: "a.json", in: dir.path)
        #expect(FileManager.default.fileExists(atPath: live.path))
        #expect(!FileManager.default.fileExists(atPath: gone.path))
    }

    /// Fails every fetch; the first one also runs `onFirstFetch`.
    final class FirstFetchHook: HTTPFetching {
        private let fired = Mutex(false)
        let onFirstFetch: @Sendable () -> Void
        init(_ onFirstFetch: @escaping @Sendable () -> Void) { self.onFirstFetch = onFirstFetch }
        func fetch(_ request: HTTPRequest) async throws(UpdateFailure) -> HTTPResponse {
            let first = fired.withLock { fired in
                defer { fired = true }
                return !fired
            }
            if first { onFirstFetch() }
            throw UpdateFailure(.networkError, "scripted failure")
        }
    }

    @Test("a pass lists the cache directory once: a dead writer's temp that appears during the pass goes at the next pass")
    func listedOncePerPass() async throws {
        let sandbox = try Sandbox()
        let deadTemp = { @Sendable (store: String) in
            sandbox.cache.appendingPathComponent(AtomicWriter.tempPrefix(for: CacheDirectory.fileName(store: store)) + "\(Int32.max)-1")
        }
        try Data("x".utf8).write(to: deadTemp("s0"))
        // At the first fetch every store in progress has had its turn at the listing; s2 starts
        // only once s0 or s1 has ended (one transfer at a time, two stores in progress).
        let fetcher = FirstFetchHook { try? Data("x".utf8).write(to: deadTemp("s2")) }
        let stores = try (0..<3).map { try sandbox.store("s\($0)", url: "https://127.0.0.1:1/\($0)") }
        let updater = sandbox.updater(fetcher: fetcher)

        _ = await UpdatePass.run(stores, updater: updater, concurrency: 1)
        #expect(!FileManager.default.fileExists(atPath: deadTemp("s0").path))
        #expect(FileManager.default.fileExists(atPath: deadTemp("s2").path), "listed again after the pass began")
        _ = await UpdatePass.run(stores, updater: updater, concurrency: 1)
        #expect(!FileManager.default.fileExists(atPath: deadTemp("s2").path))
    }
}
