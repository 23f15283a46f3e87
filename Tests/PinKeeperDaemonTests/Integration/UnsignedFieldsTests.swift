import Foundation
import PinKeeper
@testable import PinKeeperDaemon
import TestSupport
import Testing

/// docs/protocol.md §6, static mode: a static list signs only `name&fingerprint&expires`,
/// so whoever can alter the hosted file (a CDN, a MITM with a rogue CA) controls its `domainsConfig`
/// and every entry's `depth`. Neither may reach the published file or a reader's verdict.
@Suite("Static lists: unsigned fields decide nothing")
struct UnsignedFieldsTests {
    static let leaf = TestEnvironment.certificate("server.pem")  // CN=localhost
    static let ca = TestEnvironment.certificate("ca.pem")
    static let unpinned = TestEnvironment.certificate("wrongname.pem")  // CN=wrong.invalid
    /// What the attacker adds to the hosted file: "pinning is required for nothing".
    static var pinningOff: [String: Any] { ["sslPinningRequiredForUnlisted": false, "domains": [] as [Any]] }

    private func validate(_ config: String, name: String, certificate: String) -> ChildProcess.Result {
        ChildProcess.run(
            TestEnvironment.binary,
            [
                "validate", "--config", config, "--store", "s", "--name", name,
                "--certificate", certificate,
            ], timeout: 30)
    }

    @Test("a tampered static list: no domainsConfig, no depth published; validate and CacheReader stay closed")
    func tamperedListThroughTheFetchPath() async throws {
        let server = try FixtureServer(), sandbox = try Sandbox()
        // The publisher signed (localhost, CA fingerprint); the attacker added depth 1 and pinningOff.
        try server.route(
            "s",
            Lists.route(
                mode: "static",
                entries: [
                    ["name": "localhost", "fingerprint": OpenSSL.fingerprint(pem: Self.ca), "expires": Lists.future, "depth": 1]
                ], extra: ["domainsConfig": Self.pinningOff]))
        let store = try sandbox.store("s", url: server.url("s"), mode: .static)

        #expect(await sandbox.updater().update(store).result == .ok)

        let text = String(decoding: try #require(sandbox.cacheBytes("s")), as: UTF8.self)
        #expect(!text.contains("domainsConfig") && !text.contains("depth"), "\(text)")
        let published = try sandbox.published("s")
        #expect(published.list.domainsConfig == nil)
        #expect(published.list.pins.map(\.depth) == [0])
        let warnings = sandbox.log.warnings(store: "s").filter { $0.message.contains("domainsConfig") }
        #expect(warnings.count == 1, "\(sandbox.log.all.map(\.message))")

        // The real binary: an unpinned name is empty (not trusted); the depth-1 pin is a leaf pin now.
        let config = try sandbox.writeConfig([("s", server.url("s"), "static")])
        let chain = sandbox.root.appendingPathComponent("chain.pem").path
        try (String(contentsOfFile: Self.leaf, encoding: .utf8) + String(contentsOfFile: Self.ca, encoding: .utf8))
            .write(toFile: chain, atomically: true, encoding: .utf8)
        let unlisted = validate(config, name: "wrong.invalid", certificate: Self.unpinned)
        #expect(unlisted.status == 2, "\(unlisted.stdout)\(unlisted.stderr)")
        let deep = validate(config, name: "localhost", certificate: chain)
        #expect(deep.status == 1, "\(deep.stdout)\(deep.stderr)")

        let reader = try CacheReader(store: "s", cacheDirectory: sandbox.cache.path)
        #expect(reader.verdict(host: "wrong.invalid", certificateDER: Array(OpenSSL.der(pem: Self.unpinned))) == .empty)
        let chainDER = [OpenSSL.der(pem: Self.leaf), OpenSSL.der(pem: Self.ca)].map { Array($0) }
        #expect(reader.verdict(host: "localhost", verifiedChain: chainDER) == .untrusted)
    }

    /// An older pinkeeper published a static list's domainsConfig and depth as they came.
    static func addUnsignedFields(_ file: inout [String: Any]) {
        file["domainsConfig"] = pinningOff
        var entries = file["fingerprints"] as? [[String: Any]] ?? []
        for index in entries.indices { entries[index]["depth"] = 1 }
        file["fingerprints"] = entries
    }

    @Test("an unchanged static list does not carry over an older file's domainsConfig or depth; the cleaned file is re-verified, not 304")
    func notModifiedPath() async throws {
        let server = try FixtureServer(), sandbox = try Sandbox()
        try server.route("s", Lists.route(mode: "static", entries: [Lists.entry("api.example.com", 1)], extra: ["etag": true]))
        let store = try sandbox.store("s", url: server.url("s"), mode: .static)
        #expect(await sandbox.updater().update(store).result == .ok)
        try sandbox.rewriteAsOlderVersion("s", change: Self.addUnsignedFields)

        let second = await sandbox.updater().update(store)
        // Cleaning the file forgot the ETag: the list is fetched and verified again in full.
        #expect(second.result == .ok && !second.notModified)
        #expect(server.requests("s").last?.status == 200)
        #expect(server.requests("s").last?.headers["if-none-match"] == nil)
        let published = try sandbox.published("s")
        #expect(published.list.domainsConfig == nil)
        #expect(published.list.pins.map(\.depth) == [0])
        #expect(published.metadata.mode == .static)
        let reader = try CacheReader(store: "s", cacheDirectory: sandbox.cache.path)
        #expect(reader.verdict(host: "wrong.invalid", fingerprint: [UInt8](repeating: 7, count: 32)) == .empty)
    }

    @Test("pinkeeper update with the server down: an older static file is cleaned, republished, and warned about once")
    func olderFileCleanedWithoutTheServer() throws {
        let server = try FixtureServer(), sandbox = try Sandbox()
        try server.route("s", Lists.route(mode: "static", entries: [Lists.entry("api.example.com", 1)]))
        let config = try sandbox.writeConfig([("s", server.url("s"), "static")])
        #expect(ChildProcess.run(TestEnvironment.binary, ["update", "--config", config], timeout: 30).status == 0)
        server.stop()
        try sandbox.rewriteAsOlderVersion("s", change: Self.addUnsignedFields)
        // Precondition: read as it lies, the older file still opens the hole...
        let raw = try CacheReader(store: "s", cacheDirectory: sandbox.cache.path)
        #expect(raw.verdict(host: "wrong.invalid", fingerprint: [UInt8](repeating: 7, count: 32)) == .trusted)
        // ...but validate already answers from it as reconciled with the static store's configuration.
        #expect(validate(config, name: "wrong.invalid", certificate: Self.unpinned).status == 2)

        let result = ChildProcess.run(TestEnvironment.binary, ["update", "--config", config], timeout: 30)
        #expect(result.status == 0 && result.stdout.hasPrefix("s fresh pins=1"), "\(result.stdout)\(result.stderr)")
        let warnings = result.stderr.split(separator: "\n").filter { LogfmtLine($0)?["level"] == "warning" && $0.contains("store=s") }
        #expect(warnings.count == 1 && warnings.first?.contains("domainsConfig") == true, "\(result.stderr)")
        let text = String(decoding: try #require(sandbox.cacheBytes("s")), as: UTF8.self)
        #expect(!text.contains("domainsConfig") && !text.contains("depth") && text.contains(#""mode": "static""#), "\(text)")
        #expect(validate(config, name: "wrong.invalid", certificate: Self.unpinned).status == 2)
    }
}
