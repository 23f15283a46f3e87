import Foundation
import Logging
import PinKeeper
import TestSupport
import Testing
@testable import PinKeeperDaemon

/// Every input the fuzzer (Tests/Fuzz/) crashed on, kept in Tests/Fuzz/crashers/, replayed through the
/// daemon's normal path: StoreUpdater with the input as the server's response, or
/// CacheDirectory.load with it as the published file. A crasher must end as an ordinary update
/// result (the daemon goes on), never as a trap. Each replay runs in a child process (an exit
/// test), so a crash that comes back fails this test instead of killing the whole test run.
@Suite("Fuzzer findings replayed (Tests/Fuzz/crashers)")
struct FuzzRegressionTests {
    @Test("the committed crashers exist")
    func crashersExist() {
        #expect(FuzzReplay.crashers().contains { $0.hasSuffix("/retry-after-non-ascii") })
    }

    @Test("every crasher replays through StoreUpdater / CacheDirectory without a crash")
    func replayAll() async {
        await #expect(processExitsWith: .success) {
            for file in FuzzReplay.crashers() {
                await FuzzReplay.replay(file)
            }
        }
    }

    /// Tests/Fuzz/crashers/retry-after-non-ascii: `429` with `Retry-After: W\u{05B1}` made Foundation's
    /// DateFormatter trap ("Incorrect range CFRange") inside HTTPResponse.retryAfter.
    @Test("a non-ASCII Retry-After is no date and no crash")
    func retryAfterNonASCII() async {
        await #expect(processExitsWith: .success) {
            for value in ["W\u{05B1}", "Wed, \u{05B1} Jan\"store\"1:00:00-YUT", "e\u{301}", "Wed, 01 Jan 2025 01:00:00 GMT\u{301}"] {
                let response = HTTPResponse(status: 429, headers: ["retry-after": value], body: Data())
                precondition(response.retryAfter(now: 0) == nil, "Retry-After \(value) was read as a date")
            }
        }
    }

    /// The same header from a real server, over libcurl: the update fails as http-error.
    @Test("a 429 with a non-ASCII Retry-After from the loopback service is an http-error, not a crash")
    func retryAfterNonASCIIOverHTTPS() async throws {
        await #expect(processExitsWith: .success) {
            let server = try! FixtureServer()
            let sandbox = try! Sandbox()
            // The fixture sends header text as Latin-1: "\u{D6}\u{B1}" goes out as the bytes
            // D6 B1, which libcurl hands over and Swift reads as UTF-8 "\u{05B1}".
            try! server.route(
                "a",
                Lists.route(
                    entries: [Lists.entry("api.example.com", 1)],
                    extra: ["status": 429, "headers": ["Retry-After": "W\u{D6}\u{B1}"]]))
            let report = await sandbox.updater().update(try! sandbox.store("a", url: server.url("a")))
            precondition(report.result == .httpError, "got \(report)")
            precondition(sandbox.cacheBytes("a") == nil)
        }
    }
}

/// Reads a crasher the way Tests/Fuzz/FuzzTarget.swift does (selector byte, newline-separated parts)
/// and feeds it to the product's own entry points.
enum FuzzReplay {
    static var directory: URL { TestEnvironment.packageRoot.appendingPathComponent("Tests/Fuzz/crashers") }

    static func crashers() -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return names.filter { !$0.hasPrefix(".") && !$0.hasSuffix(".md") }.sorted().map { directory.appendingPathComponent($0).path }
    }

    struct Canned: HTTPFetching {
        var response: HTTPResponse
        func fetch(_ request: HTTPRequest) async throws(UpdateFailure) -> HTTPResponse { response }
    }

    static func replay(_ path: String) async {
        guard let data = FileManager.default.contents(atPath: path), let selector = data.first else { return }
        let payload = Data(data.dropFirst())
        let root = TestEnvironment.temporaryDirectory("fuzz-replay")
        defer { try? FileManager.default.removeItem(at: root) }
        let cache = CacheDirectory(path: root.path)
        let keyB = try! PublicKey(base64: "BC3kV9OIDnMuVoCdDR9nEA/JidJLTTDLuSA2TSZsGgODSshfbZg31MS90WC/HdbU/A5WL5GmyDkE/iks6INv+XE=")
        func update(_ response: HTTPResponse, mode: ListMode) async -> StoreUpdater.Report {
            let updater = StoreUpdater(
                fetcher: Canned(response: response), cache: cache,
                state: StateDirectory(path: root.path),
                logger: Logger(label: "fuzz-replay") { _ in SwiftLogNoOpLogHandler() })
            return await updater.update(StoreConfig(id: "fuzz", url: "https://127.0.0.1/fuzz", publicKeys: [keyB], mode: mode))
        }
        let text = { (data: Data) in String(decoding: data, as: UTF8.self) }
        switch selector % 4 {
        case 0:  // a list body served in static mode
            _ = await update(HTTPResponse(status: 200, headers: [:], body: payload), mode: .static)
        case 1:  // a published cache file found at start
            try? payload.write(to: URL(fileURLWithPath: cache.filePath(for: "fuzz")))
            _ = cache.load(store: "fuzz", now: SystemClock().now())
        case 2:  // STATUS \n CHALLENGE \n SIGNATURE \n RETRY-AFTER \n BODY
            let p = FuzzInput.split(payload, parts: 5)
            var headers = ["retry-after": text(p[3])]
            if !p[2].isEmpty { headers[ListExchange.signatureHeader] = text(p[2]) }
            let status = Int(text(p[0]).prefix(4)) ?? 200
            let report = await update(
                HTTPResponse(status: status, headers: headers, body: p[4]),
                mode: p[1].isEmpty ? .static : .challenge)
            if !(200..<300).contains(status) {
                precondition(report.result == .httpError, "HTTP \(status) gave \(report.result)")
                precondition(cache.load(store: "fuzz", now: 0).isMissing, "a failed update published a file")
            }
        default:  // KEY \n SIGNATURE \n MESSAGE
            let p = FuzzInput.split(payload, parts: 3)
            if let key = try? PublicKey(base64: text(p[0])) {
                _ = SignatureVerifier(keys: [key]).verify(signature: Array(Data(base64Encoded: text(p[1])) ?? p[1]), message: p[2])
            }
        }
    }
}

private extension CacheDirectory.Loaded {
    var isMissing: Bool { if case .missing = self { true } else { false } }
}
