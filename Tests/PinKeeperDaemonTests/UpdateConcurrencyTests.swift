import Foundation
import Logging
import TestSupport
import Testing
@testable import PinKeeperDaemon
import PinKeeper

/// The `concurrency` key bounds how many stores one pass fetches at once, in `update` and in
/// the daemon, and a reload changes the bound for the next pass.
@Suite("Update concurrency")
struct UpdateConcurrencyTests {
    /// Counts fetches in flight and the most seen at once.
    actor Gauge {
        private(set) var inFlight = 0, peak = 0, total = 0
        func enter() {
            inFlight += 1
            total += 1
            peak = max(peak, inFlight)
        }
        func leave() { inFlight -= 1 }
        func reset() { (peak, total) = (0, 0) }
    }

    /// Holds each fetch long enough for every fetch the bound allows to start, then fails it
    /// (a failure is enough: only the fetches are counted).
    struct GaugedFetcher: HTTPFetching {
        let gauge: Gauge
        func fetch(_ request: HTTPRequest) async throws(UpdateFailure) -> HTTPResponse {
            await gauge.enter()
            try? await Task.sleep(for: .seconds(1))  // long enough for every allowed start, even on a loaded machine
            await gauge.leave()
            throw UpdateFailure(.networkError, "counted, not fetched")
        }
    }

    struct StreamNotifier: ServiceNotifier {
        let sink: AsyncStream<String>.Continuation
        func notify(_ message: String) { sink.yield(message) }
        var watchdogMicroseconds: UInt64? { nil }
    }

    static let quiet = Logger(label: "concurrency-test") { _ in SwiftLogNoOpLogHandler() }

    static func configuration(stores count: Int, concurrency: Int, root: URL) throws -> Configuration {
        let stores = try (1...count).map { index in
            var store = StoreConfig(
                id: "s\(index)", url: "https://127.0.0.1:1/s\(index)", publicKeys: [try Vectors.keyA()],
                mode: .static)
            // No retry may fall due while a test runs, however slow the machine: only the passes it starts count.
            (store.policy.retryMin, store.policy.retryMax) = (3600, 7200)
            return store
        }
        let configuration = Configuration(
            cacheDirectory: root.appendingPathComponent("cache").path,
            stateDirectory: root.appendingPathComponent("state").path,
            concurrency: concurrency, stores: stores, sources: [])
        try DataDirectories.prepare(configuration)  // as `run` and `update` do: the store locks live there
        return configuration
    }

    static func updater(_ configuration: Configuration, _ gauge: Gauge) -> StoreUpdater {
        StoreUpdater(
            fetcher: GaugedFetcher(gauge: gauge), cache: CacheDirectory(path: configuration.cacheDirectory),
            state: StateDirectory(path: configuration.stateDirectory), logger: quiet)
    }

    @Test func oneShotUpdateFetchesAtMostTheConfiguredNumberAtOnce() async throws {
        let root = TestEnvironment.temporaryDirectory("concurrency")
        defer { try? FileManager.default.removeItem(at: root) }
        let configuration = try Self.configuration(stores: 7, concurrency: 3, root: root)
        let gauge = Gauge()
        let lines = await OneShotUpdate.run(
            configuration: configuration, storeIDs: [], force: true,
            updater: Self.updater(configuration, gauge))
        #expect(lines.count == 7)
        #expect(await gauge.total == 7)
        #expect(await gauge.peak == 3)
    }

    // A limit against a hang, not a measure: alone it takes seconds, but with the suite's other
    // daemons and a loaded machine it has taken over three minutes.
    @Test(.timeLimit(.minutes(5)))
    func daemonPassesUseTheConfiguredBoundAndAReloadChangesIt() async throws {
        let root = TestEnvironment.temporaryDirectory("concurrency")
        defer { try? FileManager.default.removeItem(at: root) }
        let before = try Self.configuration(stores: 6, concurrency: 2, root: root)
        let after = try Self.configuration(stores: 6, concurrency: 5, root: root)
        let gauge = Gauge()
        let (messages, sink) = AsyncStream.makeStream(of: String.self)
        let (triggers, input) = AsyncStream.makeStream(of: Trigger.self)
        let daemon = Daemon(
            configuration: before, reload: { .success(after) },
            makeUpdater: { Self.updater($0, gauge) }, notifier: StreamNotifier(sink: sink), logger: Self.quiet)
        let running = Task { await daemon.run(triggers: triggers) }
        var notifications = messages.makeAsyncIterator()

        // Every store starts empty, so READY follows one pass over all six.
        await Self.skip(until: "READY=1", in: &notifications)
        #expect(await gauge.total == 6)
        #expect(await gauge.peak == 2)

        await gauge.reset()
        input.yield(.reload)
        await Self.skip(until: "READY=1", in: &notifications)
        input.yield(.updateAll)
        await Self.skip(until: "STATUS=", in: &notifications)
        #expect(await gauge.total == 6)
        #expect(await gauge.peak == 5)

        input.yield(.terminate)
        await running.value
    }

    static func skip(until prefix: String, in notifications: inout AsyncStream<String>.Iterator) async {
        while let message = await notifications.next(), !message.hasPrefix(prefix) {}
    }

    /// Through the real binary and a real HTTPS server: with `concurrency = 2` and every
    /// response held for a second, no three requests can arrive within one second.
    @Test func updateCommandHonoursTheKey() throws {
        let server = try FixtureServer(), sandbox = try Sandbox()
        let ids = (1...5).map { "c\($0)" }
        for id in ids {
            try server.route(id, Lists.route(entries: [Lists.entry("api.example.com", 1)], extra: ["delay": 1.0]))
        }
        let config = try sandbox.writeConfig(ids.map { ($0, server.url($0), "challenge") }, extra: "concurrency = 2")
        let result = ChildProcess.run(TestEnvironment.binary, ["update", "--config", config], timeout: 60)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.split(separator: "\n").filter { $0.contains(" ok pins=1") }.count == 5, "\(result.stdout)")

        let arrivals = server.requests().map(\.time).sorted()
        try #require(arrivals.count == 5)
        for index in 0..<(arrivals.count - 2) {
            #expect(arrivals[index + 2] - arrivals[index] >= 0.9, "three requests in flight at once: \(arrivals)")
        }

        let check = ChildProcess.run(TestEnvironment.binary, ["check-config", "--config", config], timeout: 30)
        #expect(check.stdout.contains("concurrency: 2 stores fetched at once"), "\(check.stdout)")
    }

    @Test func anOutOfRangeValueStopsUpdateWithExit78() throws {
        let sandbox = try Sandbox()
        let config = try sandbox.writeConfig([("a", "https://127.0.0.1:1/a", "challenge")], extra: "concurrency = 0")
        let result = ChildProcess.run(TestEnvironment.binary, ["update", "--config", config], timeout: 30)
        #expect(result.status == 78)
        #expect(
            result.stderr
                == "pinkeeper: \(config): key 'concurrency': must be an integer from 1 to 64: how many stores are fetched at once\n")
        #expect(try FileManager.default.contentsOfDirectory(atPath: sandbox.cache.path).isEmpty)
    }
}
