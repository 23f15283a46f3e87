import Foundation
import Glibc
import PinKeeper
@testable import PinKeeperDaemon
import TestSupport
import Testing

/// `pinkeeper run` from its start to the first READY=1, under a real notify socket.
@Suite("Start-up until READY=1", .serialized)
struct StartUpTests {
    /// Stores a and b have no pins, so READY=1 waits for one attempt at each; with
    /// `concurrency = 1` b waits for a's fetch (2 s), and a SIGHUP meanwhile changes both.
    @Test("a SIGHUP while the start-up pass runs: no RELOADING=1, and one READY=1, after every store's first attempt")
    func reloadDuringStartUpPass() throws {
        let server = try FixtureServer(), sandbox = try Sandbox()
        for (id, byte) in [("a", 1), ("b", 2)] as [(String, UInt8)] {
            try server.route(id, Lists.route(entries: [Lists.entry("\(id).example.com", byte)], extra: ["delay": 2.0]))
        }
        let stores = [("a", server.url("a"), "challenge"), ("b", server.url("b"), "challenge")]
        let config = try sandbox.writeConfig(stores, extra: "concurrency = 1")
        let socket = try NotifySocket()
        let daemon = try DaemonProcess(config: config, environment: ["NOTIFY_SOCKET": socket.address])
        let deadline = Date().addingTimeInterval(15)
        while server.requests("a").isEmpty && Date() < deadline { usleep(10_000) }
        try #require(!server.requests("a").isEmpty, "the start-up pass never fetched: \(daemon.stderr)")

        // Every store's settings change: the reload takes b, not started yet, out of the pass.
        try sandbox.writeConfig(stores, extra: "concurrency = 1", storeExtra: "max_response_size = \"512KiB\"")
        daemon.signal(SIGHUP)
        var messages: [String] = []
        var publishedAtReady: [String] = []
        while let message = socket.receive(timeout: 15) {
            messages.append(message)
            if message == "READY=1" {
                publishedAtReady = ["a", "b"].filter { FileManager.default.fileExists(atPath: sandbox.cacheFile($0).path) }
                break
            }
        }
        messages += socket.collect(until: { _ in false }, timeout: 1.5)
        daemon.signal(SIGTERM)
        #expect(daemon.waitForExit(timeout: 5) == 0)
        #expect(publishedAtReady == ["a", "b"], "READY=1 before every store's first attempt: \(messages)")
        #expect(messages.filter { $0 == "READY=1" }.count == 1, "\(messages)")
        #expect(!messages.contains { $0.hasPrefix("RELOADING=1") }, "\(messages)")
        #expect(LogfmtLine.all(daemon.stderr).contains { $0["msg"] == "configuration reloaded" }, "\(daemon.stderr)")
    }

    @Test("start-up opens a store's cache file once before READY=1")
    func cacheFileReadOnce() throws {
        let world = try ReaderWorld()
        let url = "https://127.0.0.1:1/a"
        try world.configure([.init(id: "a", url: url)])
        // Pins as an update verified them: the store is neither due nor in need of reconciling,
        // so start-up fetches nothing and READY=1 follows the reading of the files.
        var pin = Pin(name: "api.example.com", fingerprint: [UInt8](repeating: 1, count: 32), expires: ReaderWorld.future)
        pin.key = try PublicKey(base64: TestEnvironment.publicKey(1)).id
        try world.publish("a", [pin], source: url, mode: .challenge)
        let opens = world.root.appendingPathComponent("opens")
        let socket = try NotifySocket()
        let daemon = try DaemonProcess(
            config: world.config.path,
            environment: [
                "NOTIFY_SOCKET": socket.address, "LD_PRELOAD": TestEnvironment.openStaller,
                "PINKEEPER_TEST_OPEN_PATH": world.cache.appendingPathComponent("a.json").path,
                "PINKEEPER_TEST_OPEN_COUNT": opens.path,
            ])
        let ready = socket.collect(until: { $0 == "READY=1" }, timeout: 15)
        try #require(ready.last == "READY=1", "got \(ready): \(daemon.stderr)")
        let count = ((try? String(contentsOf: opens, encoding: .utf8)) ?? "").count
        #expect(count == 1, "the cache file was opened \(count) times before READY=1")
        daemon.signal(SIGTERM)
        #expect(daemon.waitForExit(timeout: 5) == 0)
        #expect(LogfmtLine.all(daemon.stderr).allSatisfy { $0["level"] != "warning" && $0["level"] != "error" }, "\(daemon.stderr)")
    }
}
