import Foundation
import Glibc
import PinKeeper
@testable import PinKeeperDaemon
import Testing

/// Every bad input of docs/cache-format.md, "Guarantees": one clear error line naming the store and the reason,
/// the published file byte-identical, and a retry scheduled.
@Suite("Bad input leaves the published cache untouched")
struct BadInputTests {
    struct Case: CustomTestStringConvertible, Sendable {
        var name: String
        var mode = "challenge"
        var expected: UpdateResult
        var reason: String
        var policy: @Sendable (inout UpdatePolicy) -> Void = { _ in }
        var route: @Sendable (FixtureServer) -> [String: Any]
        var testDescription: String { name }
    }

    static var good: [[String: Any]] { [Lists.entry("api.example.com", 1)] }

    static let cases: [Case] = [
        Case(name: "malformed JSON", expected: .invalidData, reason: "not valid JSON") { _ in
            Lists.route(entries: [], extra: ["body": "{\"fingerprints\": [ {"])
        },
        Case(name: "wrong types", expected: .invalidData, reason: "fingerprints[0].expires") { _ in
            Lists.route(
                entries: [],
                extra: [
                    "body":
                        #"{"fingerprints":[{"name":"a","fingerprint":"AQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQE=","expires":"soon"}]}"#
                ])
        },
        Case(name: "missing fingerprints", expected: .invalidData, reason: "fingerprints is missing") { _ in
            Lists.route(entries: [], extra: ["body": "{}"])
        },
        Case(name: "bad base64 fingerprint", expected: .invalidData, reason: "fingerprints[0].fingerprint") { _ in
            Lists.route(entries: [["name": "api.example.com", "fingerprint": "!!notbase64!!", "expires": Lists.future]])
        },
        Case(name: "missing signature header", expected: .invalidSignature, reason: "no X-Cert-Pinning-Signature") { _ in
            Lists.route(entries: good, extra: ["signature_override": NSNull()])
        },
        Case(name: "garbage signature", expected: .invalidSignature, reason: "does not verify") { _ in
            Lists.route(entries: good, extra: ["signature_override": "bm90IGEgc2lnbmF0dXJl"])
        },
        Case(name: "signed by the wrong key", expected: .invalidSignature, reason: "does not verify") { _ in
            Lists.route(entries: [Lists.entry("api.example.com", 9)], key: 2)
        },
        Case(name: "static entry without signature", mode: "static", expected: .invalidData, reason: "has no signature") { _ in
            Lists.route(mode: "static", entries: [Lists.entry("api.example.com", 9, extra: ["signature": ""])])
        },
        Case(name: "static entry with a wrong signature", mode: "static", expected: .invalidSignature, reason: "does not verify") { _ in
            Lists.route(mode: "static", entries: [Lists.entry("api.example.com", 9)], key: 2)
        },
        Case(name: "HTTP 404", expected: .httpError, reason: "HTTP 404") { _ in
            Lists.route(entries: good, extra: ["status": 404])
        },
        Case(name: "HTTP 500", expected: .httpError, reason: "HTTP 500") { _ in
            Lists.route(entries: good, extra: ["status": 500])
        },
        Case(name: "429 with Retry-After", expected: .httpError, reason: "Retry-After 120s") { _ in
            Lists.route(entries: good, extra: ["status": 429, "headers": ["Retry-After": "120"]])
        },
        Case(
            name: "oversize body", expected: .invalidData, reason: "max_response_size",
            policy: { $0.maxResponseSize = 64 * 1024 }
        ) { _ in
            Lists.route(entries: good, extra: ["behavior": "oversize", "oversize_bytes": 1 << 20])
        },
        Case(name: "slow drip", expected: .networkError, reason: "timed out", policy: { $0.requestTimeout = 2 }) { _ in
            Lists.route(entries: good, extra: ["behavior": "drip", "drip_interval": 0.5])
        },
        Case(
            name: "server hangs after the headers", expected: .networkError, reason: "timed out",
            policy: { $0.requestTimeout = 2 }
        ) { _ in
            Lists.route(entries: good, extra: ["behavior": "hang_after_headers", "hang_seconds": 30])
        },
        Case(name: "503 with Retry-After seconds", expected: .httpError, reason: "Retry-After 90s") { _ in
            Lists.route(entries: good, extra: ["status": 503, "headers": ["Retry-After": "90"]])
        },
        Case(name: "redirect to http://", expected: .networkError, reason: "non-HTTPS") { server in
            Lists.route(entries: good, extra: ["behavior": "redirect", "location": "http://127.0.0.1:{http_port}/bad"])
        },
        Case(name: "redirect loop", expected: .networkError, reason: "redirects") { _ in
            Lists.route(entries: good, extra: ["behavior": "redirect_loop"])
        },
        Case(name: "response cut off mid-body", expected: .networkError, reason: "curl error") { _ in
            Lists.route(entries: good, extra: ["behavior": "truncate"])
        },
    ]

    @Test(arguments: cases)
    func badInput(_ scenario: Case) async throws {
        let server = try FixtureServer(), sandbox = try Sandbox()
        let mode: ListMode = scenario.mode == "static" ? .static : .challenge
        let store = try sandbox.store("victim", url: server.url("victim"), mode: mode, policy: scenario.policy)
        try server.route("victim", Lists.route(mode: scenario.mode, entries: Self.good))
        try server.route("bad", scenario.route(server))  // a redirect target, if any
        #expect(await sandbox.updater().update(store).result == .ok)
        let before = try #require(sandbox.cacheBytes("victim"))

        try server.route("victim", scenario.route(server))
        let started = Int64(Date().timeIntervalSince1970)
        let report = await sandbox.updater().update(store)

        #expect(report.result == scenario.expected)
        #expect(report.reason?.contains(scenario.reason) == true, "reason: \(report.reason ?? "nil")")
        #expect(sandbox.cacheBytes("victim") == before, "the published file changed")
        let errors = sandbox.log.errors(store: "victim")
        #expect(errors.count == 1)
        #expect(errors.first?.metadata["result"] == scenario.expected.rawValue)
        let state = sandbox.savedState("victim")
        #expect(state.consecutiveFailures == 1)
        #expect((state.retryAt ?? 0) > started)
        #expect(report.pins == 1, "valid cached pins remain")
    }

    @Test("429 Retry-After as an HTTP date is honoured")
    func retryAfterDate() async throws {
        let server = try FixtureServer(), sandbox = try Sandbox()
        let at = Date().addingTimeInterval(600)
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        try server.route(
            "r", Lists.route(entries: Self.good, extra: ["status": 503, "headers": ["Retry-After": formatter.string(from: at)]]))
        let store = try sandbox.store("r", url: server.url("r"))
        let report = await sandbox.updater().update(store)
        #expect(report.result == .httpError)
        // The retry lands on the server's date (HTTP dates have whole seconds).
        let offset = report.nextAttempt - Int64(at.timeIntervalSince1970)
        #expect((-1...1).contains(offset), "retry \(offset)s away from the Retry-After date")
    }

    @Test("a list of only expired entries adds nothing and leaves the file byte-identical")
    func expiredOnlyList() async throws {
        let server = try FixtureServer(), sandbox = try Sandbox()
        try server.route("e", Lists.route(entries: Self.good))
        let store = try sandbox.store("e", url: server.url("e"))
        #expect(await sandbox.updater().update(store).result == .ok)
        let before = try #require(sandbox.cacheBytes("e"))

        try server.route("e", Lists.route(entries: [Lists.entry("api.example.com", 5, expires: 1_000)]))
        let report = await sandbox.updater().update(store)

        #expect(report.result == .ok)
        #expect(sandbox.cacheBytes("e") == before)
        #expect(sandbox.log.warnings(store: "e").contains { $0.message.contains("only expired") })
        #expect(
            DueTime.of(
                cache: try sandbox.published("e"), state: sandbox.savedState("e"), policy: store.policy,
                now: Int64(Date().timeIntervalSince1970)) > Int64(Date().timeIntervalSince1970))
    }

    @Test("a store with nothing valid anywhere is store-empty and publishes nothing")
    func storeEmpty() async throws {
        let server = try FixtureServer(), sandbox = try Sandbox()
        try server.route("x", Lists.route(entries: [Lists.entry("api.example.com", 5, expires: 1_000)]))
        let report = await sandbox.updater().update(try sandbox.store("x", url: server.url("x")))
        #expect(report.result == .storeEmpty)
        #expect(sandbox.cacheBytes("x") == nil)
        #expect(sandbox.log.errors(store: "x").count == 1)
    }

    @Test("the server's certificate must be trusted and match the host name")
    func tlsFailures() async throws {
        let sandbox = try Sandbox()
        for certificate in ["untrusted", "wrongname"] {
            let server = try FixtureServer(certificate: certificate)
            try server.route("t", Lists.route(entries: Self.good))
            let report = await sandbox.updater().update(try sandbox.store(certificate, url: server.url("t", host: "localhost")))
            #expect(report.result == .networkError)
            #expect(report.reason?.contains("TLS") == true, "reason: \(report.reason ?? "nil")")
        }
    }

    @Test("an unresolvable host is a network error")
    func dnsFailure() async throws {
        let sandbox = try Sandbox()
        let report = await sandbox.updater().update(try sandbox.store("dns", url: "https://pinkeeper-test.invalid/list"))
        #expect(report.result == .networkError)
        #expect(sandbox.log.errors(store: "dns").count == 1)
    }
}
