import Foundation
import Glibc
import PinKeeper
@testable import PinKeeperDaemon
import TestSupport
import Testing

extension FixtureServer {
    /// The exact bytes the fixture serves for `route` (signed by its Python signer), fetched with
    /// the curl CLI over the plain-HTTP twin: the file an operator would carry to an air-gapped host.
    func download(_ route: String) throws -> Data {
        let result = ChildProcess.run("/usr/bin/curl", ["-sSf", "http://127.0.0.1:\(httpPort)/\(route)"], timeout: 20)
        guard result.status == 0 else { throw FixtureError("curl \(route): \(result.stderr)") }
        return Data(result.stdout.utf8)
    }
}

/// `pinkeeper import --store ID FILE` through the real binary: a static list from a file is
/// verified and merged exactly as a fetched one, published, and recorded.
@Suite("pinkeeper import")
struct ImportTests {
    let server: FixtureServer
    let sandbox: Sandbox

    init() throws {
        server = try FixtureServer()
        sandbox = try Sandbox()
    }

    func pinkeeper(_ arguments: [String], timeout: TimeInterval = 30) -> ChildProcess.Result {
        ChildProcess.run(TestEnvironment.binary, arguments, timeout: timeout)
    }

    /// Serves `entries` as a static list signed by key `key`, downloads it and writes it to a file.
    func listFile(_ name: String, _ entries: [[String: Any]], key: Int = 1, extra: [String: Any] = [:]) throws -> String {
        try server.route(name, Lists.route(mode: "static", entries: entries, key: key, extra: extra))
        let file = sandbox.root.appendingPathComponent("\(name).json")
        try server.download(name).write(to: file)
        return file.path
    }

    /// The store's server answers 503: whatever is published came from the file.
    func configure(mode: String = "static", storeExtra: String = "") throws -> String {
        try server.route("s", ["mode": mode, "status": 503, "body": "down"])
        return try sandbox.writeConfig([("s", server.url("s"), mode)], storeExtra: storeExtra)
    }

    @Test("a good list is verified, merged (expired entries skipped, unsigned fields ignored), published and recorded; status is fresh")
    func goodList() throws {
        let config = try configure()
        let file = try listFile(
            "list",
            [
                Lists.entry("api.example.com", 1), Lists.entry("cdn.example.com", 2, extra: ["depth": 1]),
                Lists.entry("old.example.com", 3, expires: 1_000),
            ], extra: ["domainsConfig": UnsignedFieldsTests.pinningOff])

        let result = pinkeeper(["import", "--config", config, "--store", "s", file])
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        #expect(result.stdout.hasPrefix("s ok pins=2 next="), "\(result.stdout)")
        #expect(result.stdout.split(separator: "\n").count == 1)
        #expect(result.stderr.contains("depth or domainsConfig"), "\(result.stderr)")

        let published = try sandbox.published("s")
        #expect(published.list.pins.map(\.name) == ["api.example.com", "cdn.example.com"])
        #expect(published.list.pins.allSatisfy { $0.key == KeyRemovalTests.keyID(1) && $0.depth == 0 })
        #expect(published.list.domainsConfig == nil)
        #expect(published.metadata.mode == .static)
        let state = sandbox.savedState("s")
        #expect(state.lastResult == .ok && state.lastSuccess != nil && state.consecutiveFailures == 0)
        #expect(server.requests("s").isEmpty, "import fetched from the server")

        let status = pinkeeper(["status", "--config", config, "--json"])
        #expect(status.status == 0, "\(status.stdout)\(status.stderr)")
        let object = try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any]
        let stores = object?["stores"] as? [[String: Any]]
        #expect(stores?.first?["health"] as? String == "fresh", "\(status.stdout)")
    }

    @Test("one bad signature: nothing is published or recorded, exit 1, the line names the store and the entry")
    func badSignature() throws {
        let config = try configure()
        #expect(
            pinkeeper([
                "import", "--config", config, "--store", "s",
                try listFile("first", [Lists.entry("api.example.com", 1)]),
            ]).status == 0)
        let cacheBefore = sandbox.cacheBytes("s"), stateBefore = sandbox.savedState("s")

        // Signed by the Python signer, then one entry's fingerprint swapped after signing.
        let good = try listFile("second", [Lists.entry("api.example.com", 4), Lists.entry("cdn.example.com", 5)])
        var list = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: good))) as? [String: Any])
        var entries = try #require(list["fingerprints"] as? [[String: Any]])
        let index = try #require(entries.firstIndex { $0["name"] as? String == "cdn.example.com" })
        entries[index]["fingerprint"] = Lists.fingerprint(6)
        list["fingerprints"] = entries
        let tampered = sandbox.root.appendingPathComponent("tampered.json")
        try JSONSerialization.data(withJSONObject: list).write(to: tampered)

        let result = pinkeeper(["import", "--config", config, "--store", "s", tampered.path])
        #expect(result.status == 1, "\(result.stdout)\(result.stderr)")
        #expect(result.stdout.hasPrefix("s invalid-signature pins=1 "), "\(result.stdout)")
        #expect(result.stdout.contains("entry 'cdn.example.com'"), "\(result.stdout)")
        #expect(sandbox.cacheBytes("s") == cacheBefore, "the published file changed")
        #expect(sandbox.savedState("s") == stateBefore, "a rejected file was recorded")
    }

    @Test("a challenge-mode store refuses a file before reading it or touching anything: exit 64")
    func challengeStoreRefuses() throws {
        let config = try configure(mode: "challenge")
        let file = try listFile("list", [Lists.entry("api.example.com", 1)])
        let result = pinkeeper(["import", "--config", config, "--store", "s", file])
        #expect(result.status == 64, "\(result.stdout)\(result.stderr)")
        #expect(result.stdout.isEmpty)
        #expect(result.stderr.contains("store 's' is in challenge mode"), "\(result.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: sandbox.cache.path).isEmpty)
        #expect(try FileManager.default.contentsOfDirectory(atPath: sandbox.state.path).isEmpty)
    }

    @Test("in process: the updater itself refuses a file for a challenge-mode store, and records nothing")
    func updaterRefusesChallenge() async throws {
        let store = try sandbox.store("s", url: server.url("s"))
        let file = try listFile("list", [Lists.entry("api.example.com", 1)])
        let report = await sandbox.updater().importList(store, path: file, body: try Data(contentsOf: URL(fileURLWithPath: file)))
        #expect(report.result == .invalidData && report.reason?.contains("challenge-mode") == true, "\(report)")
        #expect(sandbox.cacheBytes("s") == nil)
        #expect(sandbox.savedState("s") == StoreState())
        #expect(server.requests("s").isEmpty)
    }

    @Test("another process holds the store's lock: busy after the wait, exit 1, nothing published")
    func busy() throws {
        let config = try configure()
        let file = try listFile("list", [Lists.entry("api.example.com", 1)])
        let held = try StoreLockTests.HeldLock(sandbox, store: "s")
        let start = Date()
        let result = pinkeeper(["import", "--config", config, "--store", "s", file])
        #expect(Date().timeIntervalSince(start) >= 4, "did not wait for the lock")
        #expect(result.status == 1, "\(result.stdout)\(result.stderr)")
        #expect(result.stdout.hasPrefix("s busy pins=0 ") && result.stdout.contains("another pinkeeper process"), "\(result.stdout)")
        #expect(sandbox.cacheBytes("s") == nil)
        held.release()
    }

    @Test("while the daemon runs (its fetches failing), an import publishes and the daemon keeps running")
    func whileTheDaemonRuns() throws {
        let config = try configure()
        let socket = try NotifySocket()
        let daemon = try DaemonProcess(config: config, environment: ["NOTIFY_SOCKET": socket.address])
        let messages = socket.collect(until: { $0.contains("READY=1") }, timeout: 15)
        #expect(messages.last?.contains("READY=1") == true, "\(messages)")

        let result = pinkeeper(["import", "--config", config, "--store", "s", try listFile("list", [Lists.entry("api.example.com", 1)])])
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        #expect(try sandbox.published("s").list.pins.count == 1)
        #expect(daemon.isRunning)
        daemon.signal(SIGTERM)
        #expect(daemon.waitForExit(timeout: 5) == 0)
    }

    @Test("standard input works; a FIFO is refused at once; a file over max_response_size is refused")
    func fileChecks() throws {
        let config = try configure(storeExtra: "max_response_size = 2048")
        let file = try listFile("list", [Lists.entry("api.example.com", 1)])
        let stdin = ChildProcess.run(
            "/bin/sh",
            [
                "-c", "exec \"$0\" import --config \"$1\" --store s - < \"$2\"",
                TestEnvironment.binary, config, file,
            ], timeout: 30)
        #expect(stdin.status == 0, "\(stdin.stdout)\(stdin.stderr)")
        #expect(stdin.stdout.hasPrefix("s ok pins=1 "), "\(stdin.stdout)")

        let fifo = sandbox.root.appendingPathComponent("fifo").path
        #expect(mkfifo(fifo, 0o600) == 0)
        let fromFIFO = pinkeeper(["import", "--config", config, "--store", "s", fifo], timeout: 10)
        #expect(!fromFIFO.timedOut, "hung on a FIFO")
        #expect(fromFIFO.status == 1 && fromFIFO.stderr.contains("not a regular file"), "\(fromFIFO.stderr)")

        let big = sandbox.root.appendingPathComponent("big.json")
        try Data(repeating: 0x20, count: 2049).write(to: big)
        let tooBig = pinkeeper(["import", "--config", config, "--store", "s", big.path])
        #expect(tooBig.status == 1 && tooBig.stderr.contains("larger than the store's max_response_size (2048 bytes)"), "\(tooBig.stderr)")
        #expect(sandbox.savedState("s").lastResult == .ok, "a refused file was recorded")
    }
}
