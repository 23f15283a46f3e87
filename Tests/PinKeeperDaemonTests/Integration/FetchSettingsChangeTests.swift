import Foundation
import PinKeeper
@testable import PinKeeperDaemon
import TestSupport
import Testing

/// Fetch settings changed while the daemon was stopped make the store due at start, and new
/// certificates in a store's `ca_file` make it due at a reload; an unchanged store waits for its
/// schedule. The daemon runs in this
/// process (`InProcessDaemon`) against the loopback server, through a fetcher that records requests.
@Suite("Fetch settings changed while the daemon was stopped")
struct FetchSettingsChangeTests {
    let server: FixtureServer
    let sandbox: Sandbox

    init() throws {
        server = try FixtureServer()
        sandbox = try Sandbox()
        for (route, byte) in [("a", 1), ("b", 2), ("c", 3)] as [(String, UInt8)] {
            try server.route(route, Lists.route(entries: [Lists.entry("\(route).example.com", byte)]))
        }
    }

    /// Runs the daemon over `stores` until it is ready and has reported its status, then stops it:
    /// the URLs it fetched, and the stores it found due at start because their settings changed.
    private func run(_ stores: [StoreConfig], untilPublished ids: [String] = []) async -> (fetched: Set<String>, madeDue: [String]) {
        let fetcher = GatedFetcher(holding: [])
        let before = sandbox.log.all.count
        let sandbox = self.sandbox
        let daemon = InProcessDaemon(sandbox.configuration(stores), logger: sandbox.log.logger) { _ in sandbox.updater(fetcher: fetcher) }
        #expect(await eventually(timeout: 30) { daemon.notifier.texts.contains("READY=1") })
        #expect(await eventually(timeout: 30) { daemon.notifier.texts.contains { $0.hasPrefix("STATUS=") } })
        let succeeded = { sandbox.log.all.dropFirst(before).filter { $0.message == "update succeeded" }.count }
        #expect(await eventually(timeout: 30) { succeeded() >= ids.count }, "\(fetcher.requested)")
        await daemon.stop()
        let madeDue = sandbox.log.all.dropFirst(before).filter { $0.message.contains("fetch settings") }
        return (Set(fetcher.requested), madeDue.compactMap { $0.metadata["store"] })
    }

    private func stores(_ change: (inout [String: StoreConfig]) throws -> Void = { _ in }) throws -> [StoreConfig] {
        var stores = [String: StoreConfig]()
        for id in ["a", "b", "c"] { stores[id] = try sandbox.store(id, url: server.url(id)) }
        try change(&stores)
        return stores.values.sorted { $0.id < $1.id }
    }

    @Test(
        "expected_common_names or the ca_file path changed while stopped: fetched at start, once; an unchanged store waits",
        .timeLimit(.minutes(2)))
    func changedWhileStopped() async throws {
        let first = await run(try stores(), untilPublished: ["a", "b", "c"])
        #expect(first.fetched.count == 3)

        let copy = sandbox.root.appendingPathComponent("ca-copy.pem")
        try FileManager.default.copyItem(atPath: TestEnvironment.certificate("ca.pem"), toPath: copy.path)
        let changed = try stores {
            $0["a"]?.expectedCommonNames = ["a.example.com"]
            $0["c"]?.caFile = copy.path  // the same certificates at another path: another setting all the same
        }
        let second = await run(changed, untilPublished: ["a", "c"])
        #expect(second.fetched == [server.url("a"), server.url("c")], "b's settings did not change: it waits for its schedule")
        #expect(second.madeDue.sorted() == ["a", "c"])

        let third = await run(changed)
        #expect(third.fetched.isEmpty, "the state records the settings the last fetch used")
        #expect(third.madeDue.isEmpty)
    }

    @Test("new certificates in the same ca_file make the store due at start", .timeLimit(.minutes(2)))
    func caFileContentChanged() async throws {
        let caFile = sandbox.root.appendingPathComponent("ca.pem")
        try FileManager.default.copyItem(atPath: TestEnvironment.certificate("ca.pem"), toPath: caFile.path)
        let stores = try stores { $0["b"]?.caFile = caFile.path }
        _ = await run(stores, untilPublished: ["a", "b", "c"])

        // Another certificate added to the bundle: the path is the same, what the fetch trusts is not.
        let bundle =
            try String(contentsOf: caFile, encoding: .utf8)
            + (try String(contentsOfFile: TestEnvironment.certificate("server.pem"), encoding: .utf8))
        try bundle.write(to: caFile, atomically: true, encoding: .utf8)
        let second = await run(stores, untilPublished: ["b"])
        #expect(second.fetched == [server.url("b")])
    }

    @Test("new certificates in the same ca_file: a reload updates that store at once, the others wait", .timeLimit(.minutes(2)))
    func caFileContentChangedBeforeReload() async throws {
        let caFile = sandbox.root.appendingPathComponent("ca.pem")
        try FileManager.default.copyItem(atPath: TestEnvironment.certificate("ca.pem"), toPath: caFile.path)
        let fetcher = GatedFetcher(holding: [])
        let sandbox = self.sandbox
        let configuration = sandbox.configuration(try stores { $0["b"]?.caFile = caFile.path })
        let daemon = InProcessDaemon(configuration, logger: sandbox.log.logger) { _ in sandbox.updater(fetcher: fetcher) }
        let succeeded = { sandbox.log.all.filter { $0.message == "update succeeded" }.count }
        let readies = { daemon.notifier.texts.filter { $0 == "READY=1" }.count }
        #expect(await eventually(timeout: 30) { readies() == 1 && succeeded() == 3 })

        daemon.send(.reload)  // the configuration and the CA file as they were: nothing is fetched
        #expect(await eventually(timeout: 30) { readies() == 2 })
        let bundle =
            try String(contentsOf: caFile, encoding: .utf8)
            + (try String(contentsOfFile: TestEnvironment.certificate("server.pem"), encoding: .utf8))
        try bundle.write(to: caFile, atomically: true, encoding: .utf8)
        daemon.send(.reload)
        #expect(await eventually(timeout: 30) { readies() == 3 && succeeded() == 4 })
        await daemon.stop()
        #expect(fetcher.requested.count == 4 && fetcher.requested.last == server.url("b"), "\(fetcher.requested)")
        let madeDue = sandbox.log.all.filter { $0.message == FetchSettings.changeNotice }.compactMap { $0.metadata["store"] }
        #expect(madeDue == ["b"])
    }

    @Test(
        "a state file from before the digest counts as unchanged until the next fetch records it; a hostile value only fetches early",
        .timeLimit(.minutes(2)))
    func stateWithoutDigest() async throws {
        _ = await run(try stores(), untilPublished: ["a", "b", "c"])
        let states = StateDirectory(path: sandbox.state.path)
        var old = sandbox.savedState("a")
        #expect(old.fetchSettings != nil)
        old.fetchSettings = nil  // as an earlier pinkeeper wrote it
        try states.save(old, store: "a")
        var hostile = sandbox.savedState("b")
        hostile.fetchSettings = String(repeating: "f", count: 64)
        try states.save(hostile, store: "b")

        // a's settings change together with the upgrade: unknown before, it waits for its schedule.
        let changed = try stores { $0["a"]?.expectedCommonNames = ["a.example.com"] }
        let second = await run(changed, untilPublished: ["b"])
        #expect(second.fetched == [server.url("b")], "only the store whose recorded settings differ is fetched early")
        #expect(second.madeDue == ["b"])

        // A fetch (`pinkeeper update --force`) records a's digest; a change after it counts.
        let forced = try #require(changed.first { $0.id == "a" })
        #expect(await sandbox.updater().update(forced).result == .ok)
        #expect(sandbox.savedState("a").fetchSettings == FetchSettings.digest(of: forced))
        #expect(await run(changed).fetched.isEmpty)
        let again = try stores { $0["a"]?.expectedCommonNames = ["a.example.com", "www.a.example.com"] }
        #expect(await run(again, untilPublished: ["a"]).fetched == [server.url("a")])
    }

    @Test("every fetch setting changes the digest; the hook, the fallback file and the proxy's password do not")
    func digestCoversTheFetchSettings() throws {
        let base = try sandbox.store("a", url: server.url("a")) { $0.proxy = .http("http://user:one@proxy.example:3128") }
        let digest = FetchSettings.digest(of: base)
        let changes: [(String, (inout StoreConfig) -> Void)] = [
            ("url", { $0.url += "2" }), ("mode", { $0.mode = .static }), ("public_key", { $0.publicKeys.append($0.publicKeys[0]) }),
            ("expected_common_names", { $0.expectedCommonNames = [] }), ("ca_file", { $0.caFile = nil }),
            ("proxy", { $0.policy.proxy = .direct }), ("request_timeout", { $0.policy.requestTimeout += 1 }),
            ("max_response_size", { $0.policy.maxResponseSize += 1 }),
        ]
        for (key, change) in changes {
            var changed = base
            change(&changed)
            #expect(FetchSettings.digest(of: changed) != digest, "\(key) left the digest as it was")
        }
        var neutral = base
        neutral.policy.onChange = ["/bin/true"]
        neutral.fallbackFile = "/nonexistent"
        neutral.policy.proxy = .http("http://user:two@proxy.example:3128")
        #expect(FetchSettings.digest(of: neutral) == digest)
    }
}
