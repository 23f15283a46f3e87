import Foundation
import PinKeeper
@testable import PinKeeperDaemon
import TestSupport
import Testing

/// What each host was served: the list digest after every verified fetch, through the real
/// fetch path, kept in the state file, shown by `status` and the metrics, logged on change.
@Suite("The digest of the served list")
struct ServedListTests {
    let server: FixtureServer
    let sandbox: Sandbox

    init() throws {
        server = try FixtureServer()
        sandbox = try Sandbox()
    }

    static func entry(_ name: String, _ byte: UInt8, expires: Int64 = Lists.future, depth: Int = 0) -> String {
        #"{"name":"\#(name)","fingerprint":"\#(Lists.fingerprint(byte))""#
            + #","expires":\#(expires)\#(depth == 0 ? "" : #","depth":\#(depth)"#)}"#
    }

    /// A MUS body written out, so that order and timestamp are the test's to choose.
    static func body(timestamp: Int64, _ entries: [String]) -> String {
        #"{"timestamp":\#(timestamp),"fingerprints":[\#(entries.joined(separator: ","))]"#
            + #","domainsConfig":{"sslPinningRequiredForUnlisted":true,"domains":[]}}"#
    }

    func serve(_ body: String) throws {
        try server.route("s", ["mode": "challenge", "signing_key": TestEnvironment.signingKey(), "body": body])
    }

    func digest() -> String? { sandbox.savedState("s").listDigest }

    func changes() -> [LogRecorder.Entry] {
        sandbox.log.all.filter { $0.message == "the pinning service served a different list" }
    }

    /// The documented digest of a body, from the second implementation (Python hashlib).
    func python(_ body: String, staticMode: Bool = false) throws -> String {
        let file = sandbox.root.appendingPathComponent("served.json")
        try Data(body.utf8).write(to: file)
        let script = TestEnvironment.fixtures.appendingPathComponent("list-digest.py").path
        let result = ChildProcess.run("/usr/bin/env", ["python3", script] + (staticMode ? ["--static"] : []) + [file.path], timeout: 30)
        return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test("challenge mode: equal content in another order and timestamp keeps the digest; another expiry or depth changes it")
    func challengeMode() async throws {
        let store = try sandbox.store("s", url: server.url("s"))
        let updater = sandbox.updater()
        let a = Self.entry("api.example.com", 1), b = Self.entry("cdn.example.com", 2, depth: 1)
        let first = Self.body(timestamp: 1_700_000_000, [a, b])
        try serve(first)
        #expect(await updater.update(store).result == .ok)
        let original = try #require(digest())
        #expect(original == (try python(first)))
        #expect(changes().count == 1 && changes().first?.metadata["previous"] == "none")
        #expect(changes().first?.metadata["list_digest"] == original)

        try serve(Self.body(timestamp: 1_700_009_999, [b, a, a]))
        #expect(await updater.update(store).result == .ok)
        #expect(digest() == original)
        #expect(changes().count == 1, "an equal list was logged as a change")

        var seen: Set<String> = [original]
        for variant in [
            [a, Self.entry("cdn.example.com", 2, expires: Lists.future - 1, depth: 1)],
            [a, Self.entry("cdn.example.com", 2, depth: 2)],
        ] {
            try serve(Self.body(timestamp: 1_700_000_000, variant))
            #expect(await updater.update(store).result == .ok)
            let changed = try #require(digest())
            #expect(seen.insert(changed).inserted, "\(variant)")
            #expect(changes().last?.metadata["list_digest"] == changed)
        }
        #expect(changes().count == 3)
    }

    @Test("a failed fetch and a 304 keep the digest; an expired entry counts only with a valid signature")
    func staticMode() async throws {
        let store = try sandbox.store("s", url: server.url("s"), mode: .static)
        let updater = sandbox.updater()
        let listed = [Lists.entry("cdn.example.com", 7)]
        try server.route("s", Lists.route(mode: "static", entries: listed, extra: ["etag": true]))
        #expect(await updater.update(store).result == .ok)
        let original = try #require(digest())
        #expect(original == (try python(#"{"fingerprints":[\#(Self.entry("cdn.example.com", 7))]}"#, staticMode: true)))

        #expect(await updater.update(store).notModified)
        #expect(server.requests("s").last?.status == 304)
        #expect(digest() == original)
        try server.route("s", ["mode": "static", "status": 500, "body": "down"])
        #expect(await updater.update(store).result == .httpError)
        #expect(digest() == original)

        // An expired entry with a forged signature is not verified, so it does not count; signed, it does.
        let expired = Lists.entry("old.example.com", 8, expires: 1_000)
        try server.route(
            "s", Lists.route(mode: "static", entries: listed + [expired.merging(["signature": MergeTests.wrongSignature]) { $1 }]))
        #expect(await updater.update(store).result == .ok)
        #expect(digest() == original)
        try server.route("s", Lists.route(mode: "static", entries: listed + [expired]))
        #expect(await updater.update(store).result == .ok)
        #expect(digest() != original)
        #expect(changes().count == 2)
    }

    @Test("a state file without a digest (an older version) makes the next static request unconditional")
    func olderStateFile() async throws {
        let store = try sandbox.store("s", url: server.url("s"), mode: .static)
        let updater = sandbox.updater()
        try server.route("s", Lists.route(mode: "static", entries: [Lists.entry("cdn.example.com", 7)], extra: ["etag": true]))
        #expect(await updater.update(store).result == .ok)
        var older = sandbox.savedState("s")
        let recorded = older.listDigest
        older.listDigest = nil
        try StateDirectory(path: sandbox.state.path).save(older, store: "s")

        let report = await updater.update(store)
        #expect(report.result == .ok && !report.notModified)
        #expect(server.requests("s").last?.headers["if-none-match"] == nil)
        #expect(digest() == recorded)
    }

    @Test("status --json and the metrics show it; a restart (another process) reads it from the state file")
    func statusAndMetrics() throws {
        let body = Self.body(timestamp: 1_700_000_000, [Self.entry("api.example.com", 1)])
        try serve(body)
        let config = try sandbox.writeConfig([("s", server.url("s"), "challenge")])
        let update = ChildProcess.run(TestEnvironment.binary, ["update", "--config", config], timeout: 30)
        #expect(update.status == 0, "\(update.stderr)")
        #expect(
            LogfmtLine.all(update.stderr).contains { $0.is("notice", "the pinning service served a different list") }, "\(update.stderr)")
        let expected = try python(body)

        let json = ChildProcess.run(TestEnvironment.binary, ["status", "--config", config, "--json"], timeout: 30)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        let stores = try #require(object["stores"] as? [[String: Any]])
        #expect(stores.first?["listDigest"] as? String == expected)

        let metrics = ChildProcess.run(TestEnvironment.binary, ["status", "--config", config, "--format", "prometheus"], timeout: 30)
        #expect(metrics.stdout.contains("pinkeeper_store_list_info{store=\"s\",digest=\"\(expected)\"} 1\n"), "\(metrics.stdout)")
    }
}
