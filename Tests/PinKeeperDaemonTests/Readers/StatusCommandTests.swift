import Foundation
import PinKeeper
@testable import PinKeeperDaemon
import TestSupport
import Testing

/// `pinkeeper status` without a daemon: health from the cache and state directories, every
/// exit status, the table and the JSON.
@Suite("pinkeeper status")
struct StatusCommandTests {
    private func pins(_ count: Int, expires: Int64 = ReaderWorld.future) -> [Pin] {
        (0..<count).map { Pin(name: "host\($0).example.com", fingerprint: [UInt8](repeating: UInt8($0), count: 32), expires: expires) }
    }

    private func storeObjects(_ result: ChildProcess.Result) throws -> [String: [String: Any]] {
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        let stores = try #require(object["stores"] as? [[String: Any]])
        return Dictionary(uniqueKeysWithValues: stores.map { ($0["store"] as? String ?? "", $0) })
    }

    @Test("all fresh: exit 0, one row per store, the list digest's first 12 digits last")
    func fresh() throws {
        let world = try ReaderWorld()
        try world.configure([.init(id: "alpha"), .init(id: "beta")])
        let now = ReaderWorld.now
        let digest = "0123456789abcdef" + String(repeating: "e", count: 48)
        for id in ["alpha", "beta"] {
            try world.publish(id, pins(2), updated: now - 120, nextUpdate: now + 3_600)
            try world.saveState(id) {
                $0.lastAttempt = now - 120; $0.lastResult = .ok; $0.lastSuccess = now - 120
                if id == "alpha" { $0.listDigest = digest }
            }
        }
        let result = world.run("status", [])
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        let lines = result.stdout.split(separator: "\n")
        #expect(lines.count == 3)
        #expect(lines[0].hasPrefix("STORE"))
        #expect(lines[0].contains("HEALTH") && lines[0].contains("EARLIEST EXPIRY") && lines[0].contains("NEXT UPDATE"))
        #expect(lines[0].hasSuffix("  LIST"))
        #expect(lines[1].hasPrefix("alpha ") && lines[1].contains(" fresh ") && lines[1].contains("ok 2m"))
        #expect(lines[1].contains("in 59m ") || lines[1].contains("in 1h "))
        #expect(lines[1].hasSuffix("  0123456789ab"), "\(lines[1])")
        #expect(lines[2].hasPrefix("beta ") && lines[2].hasSuffix("  -"), "\(lines[2])")
    }

    @Test("a failing store (valid pins, last attempt failed): exit 1, and the reason is shown")
    func failing() throws {
        let world = try ReaderWorld()
        try world.configure([.init(id: "alpha"), .init(id: "beta")])
        let now = ReaderWorld.now
        try world.publish("alpha", pins(1))
        try world.saveState("alpha") {
            $0.lastSuccess = now - 60; $0.lastResult = .ok; $0.lastAttempt = now - 60
        }
        try world.publish("beta", pins(3))
        try world.saveState("beta") {
            $0.lastSuccess = now - 7_200; $0.lastAttempt = now - 30; $0.lastResult = .invalidSignature
            $0.lastReason = "no public key verifies the response signature"; $0.consecutiveFailures = 4; $0.retryAt = now + 600
        }
        let result = world.run("status", [])
        #expect(result.status == 1, "\(result.stdout)\(result.stderr)")
        #expect(
            result.stdout.contains(
                "beta: last attempt failed: invalid-signature: no public key verifies the response signature (4 consecutive failures)"))
        let json = try storeObjects(world.run("status", ["--json"]))
        #expect(json["beta"]?["health"] as? String == "failing")
        #expect(json["beta"]?["consecutiveFailures"] as? Int == 4)
        #expect(json["beta"]?["nextUpdate"] as? Int64 == now + 600)
        #expect(json["alpha"]?["health"] as? String == "fresh")
    }

    @Test("a stale store (last success older than twice the interval): exit 1")
    func stale() throws {
        let world = try ReaderWorld()
        try world.configure([.init(id: "alpha", extra: "periodic_update_interval = \"1h\"")])
        let now = ReaderWorld.now
        try world.publish("alpha", pins(1), updated: now - 3 * 3_600, nextUpdate: now - 2 * 3_600)
        try world.saveState("alpha") {
            $0.lastSuccess = now - 3 * 3_600; $0.lastResult = .ok; $0.lastAttempt = now - 3 * 3_600
        }
        let result = world.run("status", [])
        #expect(result.status == 1)
        #expect(result.stdout.contains(" stale "))
        #expect(result.stdout.contains("older than twice the periodic update interval"))
    }

    @Test("any store empty (no file, or only expired pins): exit 2")
    func empty() throws {
        let world = try ReaderWorld()
        try world.configure([.init(id: "alpha"), .init(id: "beta"), .init(id: "gamma")])
        try world.publish("alpha", pins(1))
        try world.publish("beta", pins(2, expires: ReaderWorld.now - 5))
        let result = world.run("status", ["--json"])
        #expect(result.status == 2, "\(result.stdout)\(result.stderr)")
        let json = try storeObjects(result)
        #expect(json["alpha"]?["health"] as? String == "fresh")
        #expect(json["beta"]?["health"] as? String == "empty")
        #expect(json["beta"]?["pins"] as? Int == 0)
        #expect(json["gamma"]?["health"] as? String == "empty")
        #expect(json["gamma"]?["lastSuccess"] is NSNull)
        #expect(json["gamma"]?["lastResult"] is NSNull)
        let table = world.run("status", ["--store", "gamma"])
        #expect(table.status == 2)
        #expect(table.stdout.contains("gamma: no valid pin"))
    }

    @Test("fallback pins keep a store from being empty and are counted apart")
    func fallbackCounts() throws {
        let world = try ReaderWorld()
        let expires = ReaderWorld.now + 86_400 * 3
        let fallback = try world.file(
            "fallback.json",
            Data(
                """
                {"fingerprints": [{"name": "api.example.com", "fingerprint": "\(Data(repeating: 9, count: 32).base64EncodedString())",
                  "expires": \(expires), "signature": ""}]}
                """.utf8))
        try world.configure([.init(id: "alpha", extra: "fallback_file = \"\(fallback)\"")])
        let result = world.run("status", ["--format", "json"])
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        let alpha = try #require(try storeObjects(result)["alpha"])
        #expect(alpha["pins"] as? Int == 0)
        #expect(alpha["fallbackPins"] as? Int == 1)
        #expect(alpha["earliestExpiry"] as? Int64 == expires)
        #expect(world.run("status", []).stdout.contains("0+1 fallback"))
    }

    @Test("earliest expiry: each name counts with its latest pin, the earliest of those is reported")
    func earliestExpiry() throws {
        let world = try ReaderWorld()
        try world.configure([.init(id: "alpha")])
        let now = ReaderWorld.now
        try world.publish(
            "alpha",
            [
                Pin(name: "a.example.com", fingerprint: [UInt8](repeating: 1, count: 32), expires: now + 1_000),  // replaced by the next
                Pin(name: "a.example.com", fingerprint: [UInt8](repeating: 2, count: 32), expires: now + 90_000),
                Pin(name: "b.example.com", fingerprint: [UInt8](repeating: 3, count: 32), expires: now + 50_000),
            ])
        let alpha = try #require(try storeObjects(world.run("status", ["--json"]))["alpha"])
        #expect(alpha["earliestExpiry"] as? Int64 == now + 50_000)
        #expect(alpha["earliestExpiryName"] as? String == "b.example.com")
        #expect(alpha["pins"] as? Int == 3)
    }

    @Test("a corrupt cache file is reported and left in place (status never writes)")
    func corruptCache() throws {
        let world = try ReaderWorld()
        try world.configure([.init(id: "alpha")])
        let file = world.cache.appendingPathComponent("alpha.json")
        try Data("{]".utf8).write(to: file)
        let result = world.run("status", ["--json"])
        #expect(result.status == 2)
        let alpha = try #require(try storeObjects(result)["alpha"])
        let problems = try #require(alpha["problems"] as? [String])
        #expect(problems.count == 1 && problems[0].contains(file.path))
        #expect(try Data(contentsOf: file) == Data("{]".utf8))
        #expect(try FileManager.default.contentsOfDirectory(atPath: world.cache.path) == ["alpha.json"])
    }

    @Test("an unusable state file: health unknown (exit 1), never fresh; unknown values are null and named")
    func unreadableState() throws {
        let world = try ReaderWorld()
        try world.configure([.init(id: "alpha"), .init(id: "beta")])
        try world.publish("alpha", pins(2))
        try world.publish("beta", pins(2))
        try world.saveState("beta") {
            $0.lastResult = .ok; $0.lastAttempt = ReaderWorld.now - 60; $0.lastSuccess = ReaderWorld.now - 60
        }
        // Something that is not a state file where alpha's should be.
        try FileManager.default.createDirectory(
            at: world.state.appendingPathComponent("alpha.state.json"),
            withIntermediateDirectories: false)
        let result = world.run("status", ["--json"])
        #expect(result.status == 1, "\(result.stdout)\(result.stderr)")
        let json = try storeObjects(result)
        let alpha = try #require(json["alpha"])
        #expect(alpha["health"] as? String == "unknown")
        #expect(alpha["pins"] as? Int == 2)
        #expect(alpha["lastResult"] is NSNull)
        #expect(alpha["consecutiveFailures"] is NSNull)
        #expect(alpha["nextUpdate"] is NSNull)
        let problems = try #require(alpha["problems"] as? [String])
        #expect(problems.contains { $0.contains("result is unknown") && $0.contains("alpha.state.json") }, "\(problems)")
        #expect(json["beta"]?["health"] as? String == "fresh")

        let table = world.run("status", [])
        #expect(table.status == 1)
        #expect(table.stdout.contains("alpha  unknown"), "\(table.stdout)")
        let metrics = world.run("status", ["--format", "prometheus"])
        #expect(metrics.stdout.contains("pinkeeper_store_health{store=\"alpha\",health=\"unknown\"} 1"), "\(metrics.stdout)")
        #expect(!metrics.stdout.contains("pinkeeper_store_consecutive_failures{store=\"alpha\"}"))
    }

    @Test(
        "a user who may not read the 0700 state directory gets unknown and the reason, not fresh",
        .enabled(if: getuid() == 0, "needs root to run status as another user"))
    func stateDirectoryNotReadable() throws {
        let world = try ReaderWorld()
        try world.configure([.init(id: "alpha")])
        try world.publish("alpha", pins(1))
        try world.saveState("alpha") {
            $0.lastResult = .invalidSignature; $0.lastAttempt = ReaderWorld.now - 30; $0.consecutiveFailures = 2
        }
        chmod(world.state.path, 0o700)
        let result = ChildProcess.run(
            "/usr/bin/setpriv",
            [
                "--reuid=65534", "--regid=65534", "--clear-groups", TestEnvironment.binary,
                "status", "--config", world.config.path,
            ], timeout: 30)
        #expect(result.status == 1, "\(result.stdout)\(result.stderr)")
        #expect(result.stdout.contains("alpha  unknown"), "\(result.stdout)")
        #expect(!result.stdout.contains("fresh"))
        #expect(result.stdout.contains("Permission denied"), "\(result.stdout)")
    }

    @Test(
        "usage errors exit 64",
        arguments: [
            (["--json", "--format", "table"], Int32(64)),
            (["--format", "yaml"], Int32(64)),
            (["--store", "nosuch"], Int32(64)),
        ])
    func usage(arguments: [String], status: Int32) throws {
        let world = try ReaderWorld()
        try world.configure([.init(id: "alpha")])
        let result = world.run("status", arguments)
        #expect(result.status == status, "\(result.stderr)")
        #expect(!result.stderr.isEmpty)
    }

    @Test("an invalid configuration exits 78")
    func badConfig() throws {
        let world = try ReaderWorld()
        try world.configure([.init(id: "alpha", extra: "periodic_update_interval = \"soon\"")])
        let result = world.run("status", [])
        #expect(result.status == 78)
        #expect(result.stderr.contains("periodic_update_interval"))
    }

    @Test("after real updates by the daemon: fresh (0), then failing (1) once the server breaks")
    func afterRealUpdates() throws {
        let server = try FixtureServer(), world = try ReaderWorld()
        try server.route("banking", Lists.route(entries: [Lists.entry("api.example.com", 1), Lists.entry("cdn.example.com", 2)]))
        try world.configure([
            .init(
                id: "banking", extra: "ca_file = \"\(TestEnvironment.certificate("ca.pem"))\"",
                url: server.url("banking?appName=banking"))
        ])
        let update = world.run("update", [])
        #expect(update.status == 0, "\(update.stdout)\(update.stderr)")
        let fresh = world.run("status", ["--json"])
        #expect(fresh.status == 0)
        let first = try #require(try storeObjects(fresh)["banking"])
        #expect(first["pins"] as? Int == 2)
        #expect(first["lastResult"] as? String == "ok")

        try server.route("banking", Lists.route(entries: [Lists.entry("api.example.com", 1)], extra: ["status": 500]))
        #expect(world.run("update", ["--force"]).status == 1)
        let failing = world.run("status", [])
        #expect(failing.status == 1, "\(failing.stdout)")
        #expect(failing.stdout.contains("banking: last attempt failed: http-error"))
        #expect(failing.stdout.contains(" failing "))
    }
}
