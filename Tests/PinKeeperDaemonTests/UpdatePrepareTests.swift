import Foundation
import Logging
import PinKeeper
import Synchronization
import TestSupport
import Testing
@testable import PinKeeperDaemon

/// `pinkeeper update` asks the fetcher to prepare (load libcurl in the background) once, as soon
/// as it knows a store will be fetched, and never when nothing is fetched.
@Suite("Update prepares its fetcher")
struct UpdatePrepareTests {
    /// Records `prepare`, each fetch and `preparationFinished`, in order; every fetch fails (only
    /// the calls matter).
    final class RecordingFetcher: HTTPFetching {
        let events = Mutex<[String]>([])
        func prepare() { events.withLock { $0.append("prepare") } }
        func preparationFinished() async { events.withLock { $0.append("finished") } }
        func fetch(_ request: HTTPRequest) async throws(UpdateFailure) -> HTTPResponse {
            events.withLock { $0.append("fetch") }
            throw UpdateFailure(.networkError, "recorded, not fetched")
        }
    }

    static let quiet = Logger(label: "prepare-test") { _ in SwiftLogNoOpLogHandler() }

    static func run(
        stores: [StoreConfig], force: Bool, root: URL,
        publish: (CacheDirectory) throws -> Void = { _ in }
    ) async throws -> ([OneShotUpdate.Line], [String]) {
        let configuration = Configuration(
            cacheDirectory: root.appendingPathComponent("cache").path,
            stateDirectory: root.appendingPathComponent("state").path,
            stores: stores, sources: [])
        try DataDirectories.prepare(configuration)
        let cache = CacheDirectory(path: configuration.cacheDirectory)
        try publish(cache)
        let fetcher = RecordingFetcher()
        let updater = StoreUpdater(
            fetcher: fetcher, cache: cache, state: StateDirectory(path: configuration.stateDirectory),
            logger: quiet)
        let lines = await OneShotUpdate.run(configuration: configuration, storeIDs: [], force: force, updater: updater)
        return (lines, fetcher.events.withLock { $0 })
    }

    static func stores(_ count: Int) throws -> [StoreConfig] {
        try (1...count).map { StoreConfig(id: "s\($0)", url: "https://127.0.0.1:1/s\($0)", publicKeys: [try Vectors.keyA()]) }
    }

    @Test func forcedUpdatePreparesOnceBeforeTheFirstFetch() async throws {
        let root = TestEnvironment.temporaryDirectory("prepare")
        defer { try? FileManager.default.removeItem(at: root) }
        let (lines, events) = try await Self.run(stores: try Self.stores(3), force: true, root: root)
        #expect(lines.count == 3)
        #expect(events == ["prepare", "fetch", "fetch", "fetch", "finished"])
    }

    @Test func dueStoresWithoutForcePrepareOnce() async throws {
        let root = TestEnvironment.temporaryDirectory("prepare")
        defer { try? FileManager.default.removeItem(at: root) }
        let (_, events) = try await Self.run(stores: try Self.stores(2), force: false, root: root)  // no cache: both due
        #expect(events == ["prepare", "fetch", "fetch", "finished"])
    }

    /// A due store that fails before its fetch (here: its lock cannot be taken) must not let the
    /// process exit while the preparation is still running: exiting during libcurl's background
    /// initialisation crashed `pinkeeper update`.
    @Test func aStoreFailingBeforeItsFetchStillWaitsForThePreparation() async throws {
        let root = TestEnvironment.temporaryDirectory("prepare")
        defer { try? FileManager.default.removeItem(at: root) }
        let store = try Self.stores(1)[0]
        let (lines, events) = try await Self.run(stores: [store], force: true, root: root) { _ in
            // A directory where the lock file should be: opening it fails.
            try FileManager.default.createDirectory(
                atPath: root.appendingPathComponent("state/\(store.id).lock").path,
                withIntermediateDirectories: true)
        }
        #expect(lines.count == 1 && lines[0].failed)
        #expect(events == ["prepare", "finished"])
    }

    @Test func nothingDueNothingPrepared() async throws {
        let root = TestEnvironment.temporaryDirectory("prepare")
        defer { try? FileManager.default.removeItem(at: root) }
        let store = try Self.stores(1)[0]
        let now = Int64(Date().timeIntervalSince1970)
        let (lines, events) = try await Self.run(stores: [store], force: false, root: root) { cache in
            let pin = Pin(
                name: "a", fingerprint: [UInt8](repeating: 1, count: 32), expires: now + 30 * 86_400,
                key: store.publicKeys[0].id)
            try cache.publish(
                CacheFile(
                    list: PinList(pins: [pin]),
                    metadata: .init(
                        store: store.id, source: store.url, updated: now, nextUpdate: now + 86_400,
                        mode: store.mode)))
        }
        #expect(lines.map(\.result) == ["fresh"])
        #expect(events.isEmpty)
    }
}
