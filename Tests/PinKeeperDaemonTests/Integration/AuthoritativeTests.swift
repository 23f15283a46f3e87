import Foundation
import Glibc
import PinKeeper
@testable import PinKeeperDaemon
import TestSupport
import Testing

/// `authoritative = true` through the real fetch path: libcurl against the loopback service,
/// lists signed by Python `cryptography`, and the real binary for `update`, `--dry-run`,
/// `validate`, `status` and a reload.
@Suite("authoritative: pins the pinning service no longer lists go", .serialized)
struct AuthoritativeTests {
    let server: FixtureServer
    let sandbox: Sandbox

    init() throws {
        server = try FixtureServer()
        sandbox = try Sandbox()
    }

    static let soon = Int64(Date().timeIntervalSince1970) + 86_400  // inside the 14-day threshold

    /// api.example.com twice and old.example.com (expiring within a day), then a list where the
    /// first api pin and old.example.com are gone and cdn.example.com is new.
    static var before: [[String: Any]] {
        [
            Lists.entry("api.example.com", 1), Lists.entry("api.example.com", 2, expires: Lists.future - 10),
            Lists.entry("old.example.com", 3, expires: soon),
        ]
    }
    static var after: [[String: Any]] {
        [Lists.entry("api.example.com", 2, expires: Lists.future - 10), Lists.entry("cdn.example.com", 4)]
    }

    func pinkeeper(_ arguments: [String]) -> ChildProcess.Result {
        ChildProcess.run(TestEnvironment.binary, arguments, timeout: 30)
    }

    func fingerprints(_ store: String) throws -> [String] { try sandbox.published(store).list.pins.map(\.fingerprintBase64) }

    // MARK: The update

    @Test(
        "true drops what the response no longer lists, with one warning and the next update from what is left; false merges",
        arguments: [false, true])
    func dropOrMerge(authoritative: Bool) async throws {
        try server.route("s", Lists.route(entries: Self.before))
        let store = try sandbox.store("s", url: server.url("s")) { $0.authoritative = authoritative }
        let updater = sandbox.updater()
        #expect(await updater.update(store).result == .ok)
        #expect(try fingerprints("s").count == 3)

        try server.route("s", Lists.route(entries: Self.after))
        let started = Int64(Date().timeIntervalSince1970)
        let report = await updater.update(store)
        #expect(report.result == .ok)
        let kept = authoritative ? [2, 4] : [1, 2, 4, 3]
        #expect(try fingerprints("s") == kept.map { Lists.fingerprint(UInt8($0)) })
        #expect(report.pins == kept.count)

        let dropped = sandbox.log.warnings(store: "s").filter { $0.message == "dropped pins the pinning service no longer lists" }
        #expect(dropped.count == (authoritative ? 1 : 0))
        #expect(dropped.first.map { $0.metadata["dropped"] == "2" && $0.metadata["event"] == "pins-dropped" } ?? true)
        // old.example.com expiring tomorrow set a short schedule and a warning; without it, neither.
        let expiring = sandbox.log.warnings(store: "s").filter { $0.message == "pins expiring without a replacement" }
        #expect(expiring.count == (authoritative ? 1 : 2))
        let nextIn = report.nextAttempt - started
        #expect(authoritative ? nextIn > 6 * 86_400 : nextIn < 86_400 / 8 + 60, "next update in \(nextIn) s")
    }

    @Test("an invalid signature or a 304 drops nothing: nothing was verified fresh")
    func unverifiedDropsNothing() async throws {
        try server.route("s", Lists.route(entries: Self.before))
        let store = try sandbox.store("s", url: server.url("s")) { $0.authoritative = true }
        let updater = sandbox.updater()
        #expect(await updater.update(store).result == .ok)
        let published = sandbox.cacheBytes("s")

        try server.route("s", Lists.route(entries: [], extra: ["sign_with": TestEnvironment.signingKey(2)]))
        #expect(await updater.update(store).result == .invalidSignature)
        try server.route("s", Lists.route(entries: [], extra: ["status": 304]))
        #expect(await updater.update(store).result == .httpError)
        #expect(sandbox.cacheBytes("s") == published)
    }

    // MARK: The commands

    @Test("--dry-run counts the drop; update drops, runs on_change; validate answers untrusted and empty for dropped pins")
    func commands() throws {
        let hook = try HookScript(in: sandbox.root)
        try server.route("s", Lists.route(entries: Self.before))
        let config = try sandbox.writeConfig([("s", server.url("s"), "challenge")], storeExtra: "authoritative = true\n" + hook.keys())
        #expect(pinkeeper(["update", "--config", config]).status == 0)
        #expect(hook.runs.count == 1)

        try server.route("s", Lists.route(entries: Self.after))
        let dryRun = pinkeeper(["update", "--config", config, "--dry-run"])
        #expect(dryRun.status == 0, "\(dryRun.stderr)")
        #expect(dryRun.stdout.contains(" added=1 unchanged=1 expired=0 dropped=2"), "\(dryRun.stdout)")
        #expect(try fingerprints("s").count == 3, "the dry run published")

        let update = pinkeeper(["update", "--config", config, "--force"])
        #expect(update.status == 0, "\(update.stderr)")
        #expect(
            LogfmtLine.all(update.stderr).contains { $0.is("warning", "dropped pins the pinning service no longer lists") },
            "\(update.stderr)")
        #expect(hook.runs.count == 2 && hook.runs.last?["pins"] == "2")

        func validate(_ name: String, _ byte: UInt8) -> ChildProcess.Result {
            pinkeeper(["validate", "--config", config, "--store", "s", "--name", name, "--fingerprint", Lists.fingerprint(byte)])
        }
        #expect(validate("api.example.com", 2).status == 0)
        let replaced = validate("api.example.com", 1)
        #expect(replaced.status == 1 && replaced.stdout.hasPrefix("untrusted"), "\(replaced.stdout)")
        let gone = validate("old.example.com", 3)
        #expect(gone.status == 2 && gone.stdout.hasPrefix("empty"), "\(gone.stdout)")
    }

    @Test("a verified list of nothing valid empties the store as the server said; status says so", arguments: ["empty", "expired"])
    func serverEmptiesTheStore(kind: String) throws {
        let hook = try HookScript(in: sandbox.root)
        try server.route("s", Lists.route(entries: Self.before))
        try server.route("m", Lists.route(entries: Self.before))
        let config = try sandbox.writeConfig(
            [("s", server.url("s"), "challenge"), ("m", server.url("m"), "challenge")], storeExtra: hook.keys())
        // Only s is authoritative: m shows Wultra's merge, which keeps its pins.
        let text = try String(contentsOfFile: config, encoding: .utf8).replacingOccurrences(
            of: "[stores.s]\n", with: "[stores.s]\nauthoritative = true\n")
        try text.write(toFile: config, atomically: true, encoding: .utf8)
        #expect(pinkeeper(["update", "--config", config]).status == 0)

        let nothing = kind == "empty" ? [] : [Lists.entry("api.example.com", 1, expires: 1_000)]
        for route in ["s", "m"] { try server.route(route, Lists.route(entries: nothing)) }
        let update = pinkeeper(["update", "--config", config, "--force"])
        #expect(update.status == 1)
        #expect(update.stdout.contains("s store-empty pins=0 "), "\(update.stdout)")
        #expect(try sandbox.published("s").list.pins.isEmpty)
        #expect(try fingerprints("m").count == 3)
        #expect(hook.waitForRuns(3).filter { $0["store"] == "s" }.last?["pins"] == "0")

        let status = pinkeeper(["status", "--config", config])
        #expect(status.status == 2)
        #expect(
            status.stdout.contains("s: no valid pin: the pinning service's last verified list named none (authoritative)"),
            "\(status.stdout)")
        let json = try #require(
            try JSONSerialization.jsonObject(with: Data(pinkeeper(["status", "--config", config, "--json"]).stdout.utf8)) as? [String: Any])
        let stores = try #require(json["stores"] as? [[String: Any]])
        let s = try #require(stores.first { $0["store"] as? String == "s" })
        #expect(s["health"] as? String == "empty" && s["lastResult"] as? String == "store-empty")
        #expect(
            pinkeeper(["validate", "--config", config, "--store", "s", "--name", "api.example.com", "--fingerprint", Lists.fingerprint(2)])
                .status == 2)
    }

    @Test("check-config refuses it for a static store: exit 78, naming the store and the key")
    func staticStoreRefused() throws {
        let config = try sandbox.writeConfig([("s", server.url("s"), "static")], storeExtra: "authoritative = true")
        let result = pinkeeper(["check-config", "--config", config])
        #expect(result.status == 78)
        #expect(result.stderr.contains("store 's'") && result.stderr.contains("key 'authoritative'"), "\(result.stderr)")
    }

    // MARK: The daemon

    @Test("a reload that switches it on fetches the store at once, and the drop happens then")
    func reloadSwitchesItOn() throws {
        try server.route("s", Lists.route(entries: Self.before))
        let config = try sandbox.writeConfig([("s", server.url("s"), "challenge")])
        let socket = try NotifySocket()
        let daemon = try DaemonProcess(config: config, environment: ["NOTIFY_SOCKET": socket.address])
        #expect(socket.collect(until: { $0.contains("READY=1") }, timeout: 15).last?.contains("READY=1") == true)
        #expect(try fingerprints("s").count == 3)

        try server.route("s", Lists.route(entries: Self.after))
        try sandbox.writeConfig([("s", server.url("s"), "challenge")], storeExtra: "authoritative = true")
        daemon.signal(SIGHUP)
        let expected = [2, 4].map { Lists.fingerprint(UInt8($0)) }
        let deadline = Date().addingTimeInterval(15)
        while (try? fingerprints("s")) != expected && Date() < deadline { usleep(50_000) }
        #expect(try fingerprints("s") == expected)
        #expect(server.requests("s").count == 2)
        daemon.signal(SIGTERM)
        #expect(daemon.waitForExit(timeout: 5) == 0)
        #expect(daemon.stderr.contains("dropped pins the pinning service no longer lists"))
    }
}
