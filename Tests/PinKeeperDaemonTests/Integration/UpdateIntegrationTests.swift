import Foundation
import PinKeeper
@testable import PinKeeperDaemon
import Testing

/// The real path: libcurl over HTTPS on loopback, lists signed by Python `cryptography`.
@Suite("Updates against the loopback pinning service")
struct UpdateIntegrationTests {
    @Test("challenge mode: the request carries a fresh challenge and the verified list is published")
    func challengeMode() async throws {
        let server = try FixtureServer(), sandbox = try Sandbox()
        try server.route(
            "banking",
            Lists.route(entries: [
                Lists.entry("api.example.com", 1), Lists.entry("api.example.com", 2, expires: Lists.future - 10),
                Lists.entry("old.example.com", 3, expires: 1_000),
            ]))
        let store = try sandbox.store("banking", url: server.url("banking?appName=banking"))

        let report = await sandbox.updater().update(store)

        #expect(report.result == .ok)
        #expect(report.pins == 2)
        let logged = try #require(sandbox.log.all.first { $0.message == "update succeeded" })
        #expect(logged.metadata["pins"] == "2")
        #expect(logged.metadata["store"] == "banking")
        #expect(logged.metadata["event"] == "update-succeeded")
        let published = try sandbox.published("banking")
        #expect(published.list.pins.map(\.fingerprintBase64) == [Lists.fingerprint(1), Lists.fingerprint(2)])
        #expect(published.list.pins.allSatisfy { $0.signature == nil })
        #expect(published.metadata.store == "banking")
        #expect(published.metadata.nextUpdate > published.metadata.updated)
        let attributes = try FileManager.default.attributesOfItem(atPath: sandbox.cacheFile("banking").path)
        #expect((attributes[.posixPermissions] as? Int) == 0o644)

        let request = try #require(server.requests("banking").first)
        let challenge = try #require(request.headers["x-cert-pinning-challenge"])
        #expect(Data(base64Encoded: challenge)?.count == 16)
        #expect(request.headers["accept"] == "application/json")
        #expect(request.headers["user-agent"] == "pinkeeper/\(PinKeeperVersion.string)")
        #expect(request.path == "/banking?appName=banking")
    }

    @Test("every challenge is new")
    func challengesDiffer() async throws {
        let server = try FixtureServer(), sandbox = try Sandbox()
        try server.route("mus", Lists.route(entries: [Lists.entry("api.example.com", 1)]))
        let store = try sandbox.store("mus", url: server.url("mus"))
        for _ in 0..<3 { #expect(await sandbox.updater().update(store).result == .ok) }
        let challenges = Set(server.requests("mus").compactMap { $0.headers["x-cert-pinning-challenge"] })
        #expect(challenges.count == 3)
    }

    @Test("static mode keeps per-entry signatures; an unchanged list costs a 304 and no parsing")
    func staticModeAndNotModified() async throws {
        let server = try FixtureServer(), sandbox = try Sandbox()
        try server.route(
            "static",
            Lists.route(
                mode: "static", entries: [Lists.entry("cdn.example.com", 7)],
                extra: ["etag": true]))
        let store = try sandbox.store("static", url: server.url("static", host: "localhost"), mode: .static)

        let first = await sandbox.updater().update(store)
        #expect(first.result == .ok && !first.notModified)
        let pin = try #require(try sandbox.published("static").list.pins.first)
        #expect(pin.signature?.isEmpty == false)
        #expect(server.requests("static").first?.headers["x-cert-pinning-challenge"] == nil)

        // The second request is conditional; the server answers 304 and nothing is parsed or verified.
        let second = await sandbox.updater().update(store)
        #expect(second.result == .ok)
        #expect(second.notModified)
        let requests = server.requests("static")
        #expect(requests.count == 2)
        #expect(requests.last?.headers["if-none-match"] != nil)
        #expect(requests.last?.status == 304)
        #expect(try sandbox.published("static").list.pins == [pin])
    }

    @Test("static mode without ETag: the same bytes again are not parsed or verified; new bytes are")
    func sameStaticBody() async throws {
        let server = try FixtureServer(), sandbox = try Sandbox()
        try server.route("s", Lists.route(mode: "static", entries: [Lists.entry("cdn.example.com", 7)]))
        let store = try sandbox.store("s", url: server.url("s"), mode: .static)
        let updater = sandbox.updater()
        #expect(await updater.update(store).notModified == false)
        #expect(await updater.update(store).notModified == true)
        try server.route("s", Lists.route(mode: "static", entries: [Lists.entry("cdn.example.com", 8)]))
        let changed = await updater.update(store)
        #expect(changed.result == .ok && !changed.notModified)
        #expect(try sandbox.published("s").list.pins.count == 2)
    }

    @Test("a 304 is not trusted when the request was not conditional")
    func unconditionalNotModified() async throws {
        let server = try FixtureServer(), sandbox = try Sandbox()
        try server.route("s", ["status": 304, "mode": "static", "body": ""])
        let store = try sandbox.store("s", url: server.url("s"), mode: .static)
        let report = await sandbox.updater().update(store)
        #expect(report.result == .httpError)
        #expect(sandbox.cacheBytes("s") == nil)
    }

    @Test("two stores update concurrently in one pass, each into its own file")
    func twoStores() async throws {
        let server = try FixtureServer(), sandbox = try Sandbox()
        try server.route("a", Lists.route(entries: [Lists.entry("a.example.com", 1)]))
        try server.route("b", Lists.route(mode: "static", entries: [Lists.entry("b.example.com", 2)]))
        let stores = [try sandbox.store("a", url: server.url("a")), try sandbox.store("b", url: server.url("b"), mode: .static)]

        let reports = await UpdatePass.run(stores, updater: sandbox.updater())

        #expect(reports.map(\.result) == [.ok, .ok])
        #expect(try sandbox.published("a").list.pins.map(\.name) == ["a.example.com"])
        #expect(try sandbox.published("b").list.pins.map(\.name) == ["b.example.com"])
    }

    @Test("key rotation: a list signed by the second configured key is accepted")
    func keyRotation() async throws {
        let server = try FixtureServer(), sandbox = try Sandbox()
        try server.route("rot", Lists.route(entries: [Lists.entry("api.example.com", 1)], key: 2))
        try server.route("rot-static", Lists.route(mode: "static", entries: [Lists.entry("api.example.com", 1)], key: 2))
        let rotated = try sandbox.store("rot", url: server.url("rot"), keys: [1, 2])
        let rotatedStatic = try sandbox.store("rot-static", url: server.url("rot-static"), mode: .static, keys: [1, 2])
        let oldOnly = try sandbox.store("old", url: server.url("rot"), keys: [1])

        #expect(await sandbox.updater().update(rotated).result == .ok)
        #expect(await sandbox.updater().update(rotatedStatic).result == .ok)
        #expect(await sandbox.updater().update(oldOnly).result == .invalidSignature)
    }

    @Test("new pins merge with the cached ones; expired ones fall away")
    func mergeAcrossUpdates() async throws {
        let server = try FixtureServer(), sandbox = try Sandbox()
        try server.route("m", Lists.route(entries: [Lists.entry("api.example.com", 1)]))
        let store = try sandbox.store("m", url: server.url("m"))
        #expect(await sandbox.updater().update(store).result == .ok)
        try server.route("m", Lists.route(entries: [Lists.entry("api.example.com", 2, expires: Lists.future + 100)]))
        #expect(await sandbox.updater().update(store).result == .ok)
        #expect(try sandbox.published("m").list.pins.map(\.fingerprintBase64) == [Lists.fingerprint(2), Lists.fingerprint(1)])
    }

    @Test("gzip-encoded responses are accepted; the signature covers the decoded body")
    func gzip() async throws {
        let server = try FixtureServer(), sandbox = try Sandbox()
        try server.route("gz", Lists.route(entries: [Lists.entry("api.example.com", 1)], extra: ["gzip": true]))
        let store = try sandbox.store("gz", url: server.url("gz"))
        #expect(await sandbox.updater().update(store).result == .ok)
        #expect(server.requests("gz").first?.headers["accept-encoding"]?.contains("gzip") == true)
    }

    @Test("2026 lists: depth and domainsConfig are published")
    func depthAndDomains() async throws {
        let server = try FixtureServer(), sandbox = try Sandbox()
        try server.route(
            "d",
            Lists.route(
                entries: [Lists.entry("api.example.com", 1), Lists.entry("api.example.com", 2, extra: ["depth": 1])],
                extra: [
                    "domainsConfig": [
                        "sslPinningRequiredForUnlisted": true,
                        "domains": [["name": "free.example.com", "sslPinningRequired": false]],
                    ]
                ]))
        let store = try sandbox.store("d", url: server.url("d"))
        #expect(await sandbox.updater().update(store).result == .ok)
        let published = try sandbox.published("d")
        #expect(published.list.pins.map(\.depth).sorted() == [0, 1])
        #expect(published.list.domainsConfig?.domains.first?.name == "free.example.com")
    }
}
