import Foundation
import PinKeeper
@testable import PinKeeperDaemon
import TestSupport
import Testing

/// A static list of several thousand entries, out of order, with duplicates, expired entries and
/// unsigned depths, through the real fetch path: entries are kept compact, verified, made into
/// pins chunk by chunk and written in pieces (`PinMerger.mergeStatic`, `CacheDirectory.publish`).
/// What is published must be what the rules say, in the bytes `CacheFile.encodedBytes` writes.
@Suite("A large static list")
struct LargeStaticListTests {
    let server: FixtureServer
    let sandbox: Sandbox

    init() throws {
        server = try FixtureServer()
        sandbox = try Sandbox()
    }

    static let now = Int64(Date().timeIntervalSince1970)

    /// 2,600 distinct entries (1,300 names, two certificates each) in a shuffled order, then
    /// 100 of them again (one with a depth) and 50 expired ones: more than two chunks.
    static func entries() -> (served: [[String: Any]], unexpired: [[String: Any]], expired: [[String: Any]]) {
        var random = SplitMix64(seed: 0x5CA1E)
        var distinct: [[String: Any]] = (0..<2600).map { i in
            [
                "name": "h\(String(format: "%04d", i / 2)).example.com",
                "fingerprint": Data(SHA256.digest(Array("cert \(i)".utf8))).base64EncodedString(),
                "expires": Lists.future - Int64(i % 2) * 86_400 * 30,
            ]
        }
        distinct.shuffle(using: &random)
        var again = Array(distinct.prefix(100))
        again[7]["depth"] = 2
        let expired: [[String: Any]] = (0..<50).map { i in
            ["name": "old\(i).example.com", "fingerprint": Lists.fingerprint(UInt8(i)), "expires": Int64(1_000 + i)]
        }
        return (distinct + again + expired, distinct, expired)
    }

    /// The documented digest of a static list (Tests/Fixtures/list-digest.py).
    func python(_ entries: [[String: Any]]) throws -> String {
        let file = sandbox.root.appendingPathComponent("digest-input.json")
        try JSONSerialization.data(withJSONObject: ["fingerprints": entries]).write(to: file)
        let script = TestEnvironment.fixtures.appendingPathComponent("list-digest.py").path
        let result = ChildProcess.run("/usr/bin/env", ["python3", script, "--static", file.path], timeout: 60)
        #expect(result.status == 0, "\(result.stderr)")
        return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test("the published file holds each unexpired entry once, verified, in published order, as CacheFile encodes it")
    func publishesWhatTheRulesSay() async throws {
        let (served, unexpired, expired) = Self.entries()
        try server.route("s", Lists.route(mode: "static", entries: served))
        let store = try sandbox.store("s", url: server.url("s"), mode: .static) { $0.maxResponseSize = 8 << 20 }
        let report = await sandbox.updater().update(store)
        #expect(report.result == .ok, "\(report)")
        #expect(report.pins == unexpired.count)

        let bytes = try Data(contentsOf: sandbox.cacheFile("s"))
        let file = try CacheFile(json: bytes)
        #expect(Array(bytes) == file.encodedBytes(), "the file is not CacheFile's encoding of its own pins")
        let pins = file.list.pins
        #expect(zip(pins, pins.dropFirst()).allSatisfy { Pin.publishedOrder($0, $1) }, "not strictly in published order")
        let expected = Set(unexpired.map { "\($0["name"]!) \($0["fingerprint"]!) \($0["expires"]!)" })
        #expect(Set(pins.map { "\($0.name) \($0.fingerprintBase64) \($0.expires)" }) == expected)
        let key = store.publicKeys[0]
        #expect(pins.allSatisfy { $0.depth == 0 && $0.key == key.id })
        #expect(pins.allSatisfy { SignatureVerifier(keys: [key]).verifyEntry($0) })

        // Every entry the server signed counts once, the expired ones too (their signatures verify).
        #expect(sandbox.savedState("s").listDigest == (try python(unexpired + expired)))
    }

    /// Entry 700 lies in a full chunk, which the early verifier may judge while the list is read;
    /// 2,222 in the last, partial one, which only the merge verifies.
    @Test(
        "one forged signature rejects the list, naming that entry, and leaves the published file and no temp file",
        arguments: [700, 2_222])
    func oneBadEntryRejectsTheList(forgedAt position: Int) async throws {
        let (served, _, _) = Self.entries()
        let store = try sandbox.store("s", url: server.url("s"), mode: .static) { $0.maxResponseSize = 8 << 20 }
        let updater = sandbox.updater()
        try server.route("s", Lists.route(mode: "static", entries: Array(served.prefix(10))))
        #expect(await updater.update(store).result == .ok)
        let before = try Data(contentsOf: sandbox.cacheFile("s"))

        var forged = served
        forged[position]["signature"] = MergeTests.wrongSignature
        try server.route("s", Lists.route(mode: "static", entries: forged))
        let report = await updater.update(store)
        #expect(report.result == .invalidSignature)
        #expect(
            report.reason?.contains("entry '\(forged[position]["name"]!)' (expires \(forged[position]["expires"]!))") == true, "\(report)")
        #expect(try Data(contentsOf: sandbox.cacheFile("s")) == before)
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: sandbox.cache.path).filter { $0.contains(".tmp-") }
        #expect(leftovers.isEmpty, "\(leftovers)")
    }

    @Test("signed by the second configured key: the file written while verifying (for the first) is not the one published")
    func secondKeyIsRecorded() async throws {
        let (served, unexpired, _) = Self.entries()
        try server.route("s", Lists.route(mode: "static", entries: Array(served.prefix(1_500)), key: 2))
        let store = try sandbox.store("s", url: server.url("s"), mode: .static, keys: [1, 2]) { $0.maxResponseSize = 8 << 20 }
        #expect(await sandbox.updater().update(store).result == .ok)
        let bytes = try Data(contentsOf: sandbox.cacheFile("s"))
        let file = try CacheFile(json: bytes)
        #expect(Array(bytes) == file.encodedBytes())
        #expect(file.list.pins.count == Set(unexpired.prefix(1_500).map { "\($0["name"]!) \($0["fingerprint"]!)" }).count)
        #expect(file.list.pins.allSatisfy { $0.key == store.publicKeys[1].id })
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: sandbox.cache.path).filter { $0.contains(".tmp-") }
        #expect(leftovers.isEmpty, "\(leftovers)")
    }
}
