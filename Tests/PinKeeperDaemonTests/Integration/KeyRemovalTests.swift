import Foundation
import Glibc
import PinKeeper
import TestSupport
import Testing

/// docs/cache-format.md, "Removing a key removes its pins", through the real binary: `pinkeeper run`
/// reloading on SIGHUP and `pinkeeper update`, with the pinning service up and down.
@Suite("Removing a public key removes its pins", .serialized)
struct KeyRemovalTests {
    let server: FixtureServer
    let sandbox: Sandbox

    init() throws {
        server = try FixtureServer()
        sandbox = try Sandbox()
    }

    /// The documented key id, computed by coreutils rather than by the code under test.
    static func keyID(_ number: Int) -> String {
        let file = TestEnvironment.certificate(number == 1 ? "signing.pub.b64" : "signing\(number).pub.b64")
        return OpenSSL.shell("base64 -d <\"$1\" | sha256sum | cut -c1-16", arguments: [file])
    }

    /// A static entry signed by the `openssl` CLI with signing key `key` (docs/protocol.md §3).
    static func signedEntry(_ name: String, _ byte: UInt8, key: Int) -> [String: Any] {
        let fingerprint = Lists.fingerprint(byte)
        let signature = OpenSSL.shell(
            "printf '%s' \"$1\" | openssl dgst -sha256 -sign \"$2\" | openssl base64 -A",
            arguments: ["\(name)&\(fingerprint)&\(Lists.future)", TestEnvironment.signingKey(key)])
        return Lists.entry(name, byte, extra: ["signature": signature])
    }

    /// Serves store `s` a static list of two entries for api.example.com, one signed by key 1
    /// and one by key 2; `extra` goes into the route (`etag`, …).
    func serveEntriesOfBothKeys(extra: [String: Any] = [:]) throws {
        try server.route(
            "s",
            Lists.route(
                mode: "static",
                entries: [Self.signedEntry("api.example.com", 1, key: 1), Self.signedEntry("api.example.com", 2, key: 2)],
                extra: extra))
    }

    /// `pinkeeper.toml` with one store `s` trusting the given signing keys.
    @discardableResult
    func configure(mode: String, keys: [Int]) throws -> String {
        let list = keys.map { "\"\(TestEnvironment.publicKey($0))\"" }.joined(separator: ", ")
        let text = """
            cache_directory = "\(sandbox.cache.path)"
            state_directory = "\(sandbox.state.path)"
            \(Sandbox.userLine)
            [stores.s]
            url = "\(server.url("s"))"
            public_key = [\(list)]
            mode = "\(mode)"
            ca_file = "\(TestEnvironment.certificate("ca.pem"))"
            request_timeout = "5s"
            retry_min = "1h"

            """
        let path = sandbox.root.appendingPathComponent("pinkeeper.toml").path
        try text.write(toFile: path + ".tmp", atomically: false, encoding: .utf8)
        _ = Glibc.rename(path + ".tmp", path)
        return path
    }

    /// (fingerprint, key) of every published pin, in file order.
    func published() -> [String]? {
        (try? sandbox.published("s"))?.list.pins.map { "\($0.fingerprintBase64) \($0.key ?? "-")" }
    }

    func pin(_ byte: UInt8, key: Int) -> String { "\(Lists.fingerprint(byte)) \(Self.keyID(key))" }

    /// Polls the published file until it shows `expected` (the daemon works in the background).
    func waitForPublished(_ expected: [String], timeout: TimeInterval = 15) -> [String]? {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if published() == expected { return expected }
            usleep(50_000)
        }
        return published()
    }

    /// Starts the daemon on the current configuration and waits for READY.
    func startDaemon(_ config: String) throws -> (DaemonProcess, NotifySocket) {
        let socket = try NotifySocket()
        let daemon = try DaemonProcess(config: config, environment: ["NOTIFY_SOCKET": socket.address])
        let messages = socket.collect(until: { $0.contains("READY=1") }, timeout: 15)
        #expect(messages.last?.contains("READY=1") == true, "\(messages)")
        return (daemon, socket)
    }

    func stop(_ daemon: DaemonProcess) -> String {
        daemon.signal(SIGTERM)
        #expect(daemon.waitForExit(timeout: 5) == 0)
        return daemon.stderr
    }

    static func droppedWarnings(_ stderr: String) -> [Substring] {
        stderr.split(separator: "\n").filter { $0.isLog("warning", "dropped pins") && $0.contains("store=s") }
    }

    // MARK: The daemon reloads

    @Test("challenge, server up: SIGHUP drops the removed key's pins and fetches at once")
    func challengeReloadServerUp() throws {
        try server.route("s", Lists.route(entries: [Lists.entry("api.example.com", 1)], key: 1))
        let config = try configure(mode: "challenge", keys: [1, 2])
        let (daemon, _) = try startDaemon(config)
        #expect(published() == [pin(1, key: 1)])

        try server.route("s", Lists.route(entries: [Lists.entry("api.example.com", 2)], key: 2))
        try configure(mode: "challenge", keys: [2])
        daemon.signal(SIGHUP)
        #expect(waitForPublished([pin(2, key: 2)]) == [pin(2, key: 2)])
        #expect(server.requests("s").count == 2)
        let warnings = Self.droppedWarnings(stop(daemon))
        #expect(warnings.count == 1 && warnings.first?.contains("dropped=1") == true, "\(warnings)")
    }

    @Test("challenge, server down: SIGHUP publishes the reduced file, even with no pin left")
    func challengeReloadServerDown() throws {
        try server.route("s", Lists.route(entries: [Lists.entry("api.example.com", 1)], key: 1))
        let config = try configure(mode: "challenge", keys: [1, 2])
        let (daemon, socket) = try startDaemon(config)
        #expect(published() == [pin(1, key: 1)])

        try server.route("s", ["status": 503, "body": "down"])
        try configure(mode: "challenge", keys: [2])
        daemon.signal(SIGHUP)
        #expect(waitForPublished([]) == [])
        // The store was fetched at once (and failed); the empty file stays.
        _ = socket.collect(until: { $0.contains("STATUS=1 store: 1 empty") }, timeout: 10)
        #expect(server.requests("s").count == 2)
        #expect(published() == [])
        let stderr = stop(daemon)
        #expect(Self.droppedWarnings(stderr).count == 1, "\(stderr)")
    }

    @Test("static, server up: SIGHUP drops the pins only the removed key signed; the new list is merged")
    func staticReloadServerUp() throws {
        try server.route("s", Lists.route(mode: "static", entries: [Lists.entry("api.example.com", 1)], key: 1))
        let config = try configure(mode: "static", keys: [1, 2])
        let (daemon, _) = try startDaemon(config)
        #expect(published() == [pin(1, key: 1)])

        try server.route("s", Lists.route(mode: "static", entries: [Lists.entry("api.example.com", 2)], key: 2))
        try configure(mode: "static", keys: [2])
        daemon.signal(SIGHUP)
        #expect(waitForPublished([pin(2, key: 2)]) == [pin(2, key: 2)])
        #expect(Self.droppedWarnings(stop(daemon)).count == 1)
    }

    @Test("static, server down: SIGHUP re-verifies the kept signatures and publishes what the remaining key vouches for")
    func staticReloadServerDown() throws {
        try serveEntriesOfBothKeys()
        let config = try configure(mode: "static", keys: [1, 2])
        let (daemon, _) = try startDaemon(config)
        let both = [pin(1, key: 1), pin(2, key: 2)].sorted()
        #expect(published()?.sorted() == both)

        server.stop()
        try configure(mode: "static", keys: [2])
        daemon.signal(SIGHUP)
        #expect(waitForPublished([pin(2, key: 2)]) == [pin(2, key: 2)])
        let warnings = Self.droppedWarnings(stop(daemon))
        #expect(warnings.count == 1 && warnings.first?.contains("dropped=1") == true, "\(warnings)")
    }

    // MARK: pinkeeper update (a restart of a oneshot)

    func update(_ config: String) -> ChildProcess.Result {
        ChildProcess.run(TestEnvironment.binary, ["update", "--config", config], timeout: 30)
    }

    @Test("pinkeeper update, static, server down: a store not yet due still loses the removed key's pins")
    func staticUpdateServerDown() throws {
        try serveEntriesOfBothKeys()
        #expect(update(try configure(mode: "static", keys: [1, 2])).status == 0)
        server.stop()
        let result = update(try configure(mode: "static", keys: [2]))
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        #expect(result.stdout.hasPrefix("s fresh pins=1"), "\(result.stdout)")
        #expect(published() == [pin(2, key: 2)])
        #expect(Self.droppedWarnings(result.stderr).count == 1, "\(result.stderr)")
    }

    @Test("pinkeeper update, challenge: a store that lost pins is fetched although not due")
    func challengeUpdateFetchesAtOnce() throws {
        try server.route("s", Lists.route(entries: [Lists.entry("api.example.com", 1)], key: 1))
        #expect(update(try configure(mode: "challenge", keys: [1, 2])).status == 0)
        try server.route("s", ["status": 503, "body": "down"])
        let result = update(try configure(mode: "challenge", keys: [2]))
        #expect(result.status == 1)
        #expect(result.stdout.hasPrefix("s http-error pins=0"), "\(result.stdout)")
        #expect(server.requests("s").count == 2)
        #expect(published() == [])
    }

    @Test("adding a key drops nothing and fetches nothing")
    func addingAKey() throws {
        try server.route("s", Lists.route(mode: "static", entries: [Lists.entry("api.example.com", 1)], key: 1))
        #expect(update(try configure(mode: "static", keys: [1])).status == 0)
        let before = sandbox.cacheBytes("s")
        let result = update(try configure(mode: "static", keys: [2, 1]))
        #expect(result.stdout.hasPrefix("s fresh pins=1"), "\(result.stdout)")
        #expect(sandbox.cacheBytes("s") == before)
        #expect(server.requests("s").count == 1)
    }

    // MARK: Files written before pins recorded their key

    @Test("challenge pins without a key are fetched at once; only those the verified response lists again stay")
    func challengeLegacyPins() throws {
        try server.route("s", Lists.route(entries: [Lists.entry("api.example.com", 1)], key: 1))
        let config = try configure(mode: "challenge", keys: [1])
        #expect(update(config).status == 0)
        try sandbox.rewriteAsOlderVersion("s") { file in
            file["fingerprints"] = (file["fingerprints"] as? [[String: Any]] ?? []) + [Lists.entry("api.example.com", 9)]
        }

        try server.route("s", ["status": 503, "body": "down"])
        #expect(update(config).status == 1)  // fetched although not due; the unconfirmed pins stay meanwhile
        #expect(published() == ["\(Lists.fingerprint(1)) -", "\(Lists.fingerprint(9)) -"])
        #expect((try? sandbox.published("s"))?.metadata.mode == .challenge)

        try server.route("s", Lists.route(entries: [Lists.entry("api.example.com", 1)], key: 1))
        #expect(update(config).status == 0)
        #expect(published() == [pin(1, key: 1)])
    }

    @Test("a verified response of only expired entries still drops the pins without a key it does not list")
    func challengeLegacyPinsAndAnExpiredOnlyResponse() throws {
        try server.route("s", Lists.route(entries: [Lists.entry("api.example.com", 1)], key: 1))
        let config = try configure(mode: "challenge", keys: [1])
        #expect(update(config).status == 0)
        try sandbox.rewriteAsOlderVersion("s") { file in
            var entries = file["fingerprints"] as? [[String: Any]] ?? []
            entries[0]["key"] = Self.keyID(1)  // this one is vouched for; the added one is not
            file["fingerprints"] = entries + [Lists.entry("api.example.com", 9)]
        }
        try server.route("s", Lists.route(entries: [Lists.entry("api.example.com", 3, expires: 1_000)], key: 1))
        let result = update(config)
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        #expect(published() == [pin(1, key: 1)])
    }
}
