import Foundation
import PinKeeper
import TestSupport
import Testing
@testable import PinKeeperDaemon

/// The list digest (docs/monitoring.md, "The list digest"): independent of order, duplicates and
/// the response's other members, changed by anything a reader decides by, and equal to what a
/// second implementation written from the documentation (`Tests/Fixtures/list-digest.py`, with
/// Python's hashlib) computes.
@Suite("List digest")
struct ListDigestTests {
    static func entry(_ name: String, _ byte: UInt8, expires: Int64 = 4_102_444_800, depth: Int? = nil) -> String {
        let depthMember = depth.map { #", "depth": \#($0)"# } ?? ""
        return
            #"{"name": \#(jsonString(name)), "fingerprint": "\#(Data(repeating: byte, count: 32).base64EncodedString())""#
            + #", "expires": \#(expires)\#(depthMember)}"#
    }

    static func list(_ entries: [String], timestamp: Int64 = 1_760_000_000, domains: String? = nil) -> String {
        #"{"timestamp": \#(timestamp), "fingerprints": [\#(entries.joined(separator: ", "))]"#
            + #"\#(domains.map { #", "domainsConfig": \#($0)"# } ?? "")}"#
    }

    static func digest(_ json: String, mode: ListMode = .challenge) throws -> String {
        let list = try PinList(json: Data(json.utf8))
        var pins = list.pins
        if mode == .static {
            pins = pins.map {
                var leaf = $0; leaf.depth = 0; return leaf
            }
        }
        return ListDigest.of(pins: pins, domainsConfig: mode == .challenge ? list.domainsConfig : nil)
    }

    /// The Python implementation's answer for the same bytes.
    static func python(_ json: String, mode: ListMode = .challenge) throws -> String {
        let file = TestEnvironment.temporaryDirectory("digest").appendingPathComponent("list.json")
        defer { try? FileManager.default.removeItem(at: file.deletingLastPathComponent()) }
        try Data(json.utf8).write(to: file)
        let script = TestEnvironment.fixtures.appendingPathComponent("list-digest.py").path
        let result = ChildProcess.run(
            "/usr/bin/env", ["python3", script] + (mode == .static ? ["--static"] : []) + [file.path], timeout: 30)
        try #require(result.status == 0, "\(result.stderr)")
        return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    static let domains =
        #"{"sslPinningRequiredForUnlisted": true, "domains": [{"name": "Free.Example.com", "sslPinningRequired": false}"#
        + #", {"name": "free.example.COM", "sslPinningRequired": true}"#
        + #", {"name": "pay.example.com", "sslPinningRequired": true}]}"#

    static let swappedDomains =
        #"{"sslPinningRequiredForUnlisted": true, "domains": [{"name": "free.example.COM", "sslPinningRequired": true}"#
        + #", {"name": "Free.Example.com", "sslPinningRequired": false}"#
        + #", {"name": "pay.example.com", "sslPinningRequired": true}]}"#

    /// Lists that exercise every part of the serialization: names with spaces, line feeds, non-ASCII
    /// letters and names that are prefixes of others, duplicates, depth, expired entries, domains
    /// listed twice under two spellings.
    static let vectors: [(String, ListMode)] = [
        (list([]), .challenge),
        (list([entry("api.example.com", 1)]), .challenge),
        (list([entry("api.example.com", 1), entry("api.example.com", 1), entry("api.example.com", 2, depth: 1)]), .challenge),
        (list([entry("a b\npin 3 x", 3), entry("a", 4, expires: 1_000), entry("ab", 4), entry("Ünïcode.example", 5)]), .challenge),
        (list([entry("api.example.com", 1)], domains: domains), .challenge),
        (list([entry("api.example.com", 1)], domains: swappedDomains), .challenge),
        (list([entry("api.example.com", 1, depth: 2), entry("CDN.example.com", 6)], domains: domains), .static),
    ]

    @Test("pinkeeper's digest is the documented one (computed again with Python's hashlib)", arguments: vectors.indices)
    func matchesTheSecondImplementation(_ index: Int) throws {
        let (json, mode) = Self.vectors[index]
        let ours = try Self.digest(json, mode: mode)
        #expect(ListDigest.isWellFormed(ours))
        #expect(ours == (try Self.python(json, mode: mode)), "\(json)")
    }

    @Test("order, duplicates, the timestamp and the domains' first-entry spelling leave it as it is")
    func sameContentSameDigest() throws {
        let a = Self.list([Self.entry("api.example.com", 1), Self.entry("cdn.example.com", 2)], timestamp: 1, domains: Self.domains)
        let reordered =
            #"{"sslPinningRequiredForUnlisted": true, "domains": [{"name": "pay.example.com", "sslPinningRequired": true}"#
            + #", {"name": "free.example.com", "sslPinningRequired": false}"#
            + #", {"name": "FREE.example.com", "sslPinningRequired": true}]}"#
        let b = Self.list(
            [Self.entry("cdn.example.com", 2), Self.entry("api.example.com", 1), Self.entry("cdn.example.com", 2)], timestamp: 2,
            domains: reordered)
        #expect(try Self.digest(a) == (try Self.digest(b)))
    }

    @Test("a changed name, fingerprint, expiry, depth or domain decision changes it")
    func changesChangeIt() throws {
        let base = try Self.digest(Self.list([Self.entry("api.example.com", 1)], domains: Self.domains))
        let changed = [
            Self.list([Self.entry("API.example.com", 1)], domains: Self.domains),
            Self.list([Self.entry("api.example.com", 9)], domains: Self.domains),
            Self.list([Self.entry("api.example.com", 1, expires: 4_102_444_801)], domains: Self.domains),
            Self.list([Self.entry("api.example.com", 1, depth: 1)], domains: Self.domains),
            Self.list([Self.entry("api.example.com", 1), Self.entry("api.example.com", 2)], domains: Self.domains),
            Self.list(
                [Self.entry("api.example.com", 1)],
                domains: Self.domains.replacingOccurrences(
                    of: "\"sslPinningRequiredForUnlisted\": true", with: "\"sslPinningRequiredForUnlisted\": false")),
            // The other spelling of free.example.com first: its decision counts now.
            Self.list([Self.entry("api.example.com", 1)], domains: Self.swappedDomains),
            Self.list([Self.entry("api.example.com", 1)]),
            Self.list([Self.entry("api.example.com", 1)], domains: #"{"sslPinningRequiredForUnlisted": true, "domains": []}"#),
        ]
        var seen: Set<String> = [base]
        for json in changed {
            #expect(seen.insert(try Self.digest(json)).inserted, "\(json)")
        }
    }

    @Test("static mode: depth and domainsConfig, which no signature covers, do not count")
    func staticIgnoresUnsignedFields() throws {
        let plain = Self.list([Self.entry("api.example.com", 1)])
        let decorated = Self.list([Self.entry("api.example.com", 1, depth: 3)], domains: Self.domains)
        #expect(try Self.digest(plain, mode: .static) == (try Self.digest(decorated, mode: .static)))
        #expect(try Self.digest(plain, mode: .challenge) != (try Self.digest(decorated, mode: .challenge)))
    }

    @Test("the example in docs/monitoring.md: its bytes hashed by coreutils, and its digest as documented")
    func documentedExample() throws {
        let pin = Pin(name: "api.example.com", fingerprint: [UInt8](repeating: 1, count: 32), expires: 4_102_444_800)
        let ours = ListDigest.of(pins: [pin], domainsConfig: nil)
        let bytes = "pinkeeper-list-digest-v1\npin 15 api.example.com \(String(repeating: "01", count: 32)) 4102444800 0\n"
        #expect(ListDigest.canonicalBytes(pins: [pin], domainsConfig: nil) == Array(bytes.utf8))
        let coreutils = ChildProcess.run("/bin/sh", ["-c", "printf '%s' \"$1\" | sha256sum | cut -c1-64", "sh", bytes], timeout: 10)
        #expect(ours == coreutils.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
        let documentation = try String(
            contentsOf: TestEnvironment.packageRoot.appendingPathComponent("docs/monitoring.md"), encoding: .utf8)
        #expect(documentation.contains("`\(ours)`"), "docs/monitoring.md shows another digest for its example")
    }

    @Test("only 64 lower-case hex digits pass as a digest read from a state file")
    func wellFormed() {
        #expect(ListDigest.isWellFormed(String(repeating: "0a", count: 32)))
        #expect(!ListDigest.isWellFormed(String(repeating: "0A", count: 32)))
        #expect(!ListDigest.isWellFormed(String(repeating: "a", count: 63)))
        #expect(!ListDigest.isWellFormed(String(repeating: "a", count: 63) + "\""))
        #expect(!ListDigest.isWellFormed(""))
    }

    /// The lines made, de-duplicated and sorted as bytes: the definition, as the digest was first written.
    static func referenceBytes(_ pins: [Pin]) -> [UInt8] {
        let lines = Set(
            pins.map { pin in
                Array("pin \(pin.name.utf8.count) ".utf8) + Array(pin.name.utf8)
                    + Array(" \(pin.fingerprint.map { String(format: "%02x", $0) }.joined()) \(pin.expires) \(pin.depth)\n".utf8)
            })
        return Array(ListDigest.header.utf8) + lines.sorted { $0.lexicographicallyPrecedes($1) }.joined()
    }

    @Test("lines sorted without being made: the same bytes as making and sorting them, for names, numbers and lengths that tie")
    func sortedWithoutTheLines() {
        var random = SplitMix64(seed: 0xD16E57)
        // Prefixes of each other, bytes below the space, lengths 9 and 10, the same name twice.
        let names = ["a", "ab", "a\n", "a\u{1}b", "a b", "ä", "123456789", "1234567890", "Z", "", "pin 3 x"]
        let numbers: [Int64] = [0, 1, 9, 10, 11, 100, -1, -10, -9, .max, .min, 4_102_444_800]
        for round in 0..<40 {
            let pins = (0..<(round % 13) * 9).map { _ in
                Pin(
                    name: names[Int(random.next() % UInt64(names.count))],
                    fingerprint: (0..<32).map { _ in UInt8(random.next() % 3) },  // few values: fingerprints that tie
                    expires: numbers[Int(random.next() % UInt64(numbers.count))],
                    depth: Int(numbers[Int(random.next() % 6)]))
            }
            #expect(ListDigest.canonicalBytes(pins: pins, domainsConfig: nil) == Self.referenceBytes(pins), "round \(round)")
        }
    }
}
