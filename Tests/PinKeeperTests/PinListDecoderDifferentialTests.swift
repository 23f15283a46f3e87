import Foundation
import PinKeeper
import TestSupport
import Testing

/// `PinList(json:)` and `CacheFile(json:)` against the `JSONDecoder` decoder they replaced
/// (`ReferencePinListDecoder`): the same decision and the same values for every input, the same
/// message wherever the reference named a field, and a refusal where the reference accepted only
/// for one of the deliberate strictnesses (see `PinListDecoderStrictnessTests`).
@Suite("PinListDecoder against the JSONDecoder it replaced")
struct PinListDecoderDifferentialTests {
    @Test func everyTestVectorFile() throws {
        var tally = Tally()
        let files = FileManager.default.enumerator(at: Vectors.root, includingPropertiesForKeys: nil)!
        for case let url as URL in files where !url.hasDirectoryPath {
            tally.compare(try Data(contentsOf: url), url.lastPathComponent)
        }
        #expect(tally.inputs >= 20)
        #expect(tally.bothAccepted >= 8)
    }

    @Test func everyConformanceCaseFile() throws {
        let url = Vectors.root.deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Conformance/cases.json")
        let table = try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as! [String: Any]
        var tally = Tally()
        for row in table["cases"] as! [[String: Any]] {
            for member in ["cache", "previous_cache", "fallback"] {
                guard let value = row[member] else { continue }
                tally.compare(try JSONSerialization.data(withJSONObject: value, options: [.sortedKeys]), "\(row["id"]!).\(member)")
            }
            if let text = row["cache_text"] as? String { tally.compare(Data(text.utf8), "\(row["id"]!).cache_text") }
        }
        #expect(tally.bothAccepted >= 50)
        #expect(tally.bothRejected >= 15)
    }

    @Test func everyTruncationOfASmallCacheFile() {
        var tally = Tally()
        let file = Array(Generated.smallCacheFile)
        for end in 0...file.count { tally.compare(Data(file[..<end]), "first \(end) bytes") }
        #expect(tally.bothAccepted >= 1)
        #expect(tally.bothRejected >= file.count - 10)
    }

    @Test func generatedDocuments() {
        var random = SplitMix64(seed: 0x5EED_0001)
        var tally = Tally()
        for round in 0..<4_000 {
            let text = Generated.document(&random)
            tally.compare(Data(text.utf8), "generated #\(round): \(text)")
        }
        // Both decoders must see plenty of good documents, and of each kind of bad one.
        #expect(tally.bothAccepted >= 400)
        #expect(tally.bothRejected >= 400)
        #expect(tally.reasons.count >= 20, "\(tally.reasons)")
    }

    @Test func randomByteMutations() {
        var random = SplitMix64(seed: 0x5EED_0002)
        var tally = Tally()
        let interesting: [UInt8] =
            Array(#"{}[],:"\ 0123456789.eE+-tfnul/"#.utf8) + [
                0x00, 0x09, 0x0A, 0x1F, 0x7F, 0x80, 0xBF, 0xC0, 0xC3, 0xE0, 0xED, 0xEF, 0xF0, 0xF4, 0xF5, 0xFF,
            ]
        for round in 0..<6_000 {
            var bytes = Array((round % 3 == 0 ? Generated.smallCacheFile : Data(Generated.document(&random).utf8)))
            for _ in 0..<(1 + Int(random.next() % 3)) where !bytes.isEmpty {
                let at = Int(random.next() % UInt64(bytes.count))
                switch random.next() % 4 {
                case 0: bytes[at] ^= UInt8(1 << (random.next() % 8))
                case 1: bytes[at] = interesting[Int(random.next() % UInt64(interesting.count))]
                case 2: bytes.insert(interesting[Int(random.next() % UInt64(interesting.count))], at: at)
                default: bytes.remove(at: at)
                }
            }
            tally.compare(Data(bytes), "mutation #\(round): \(String(decoding: bytes, as: UTF8.self))")
        }
        #expect(tally.bothAccepted >= 300)
        #expect(tally.bothRejected >= 1_000)
    }

    @Test func whitespaceEscapesAndUnknownMembersInsertedEverywhere() {
        var tally = Tally()
        let file = Generated.smallCacheFile
        let text = String(decoding: file, as: UTF8.self)
        let bytes = Array(file)
        // Whitespace and unknown members wherever the grammar allows them (and where it does not).
        for at in 0...bytes.count {
            for insert in [" \n\t\r", #""x":1,"#, #","x":{"a":[null,true,-0.5e+3,"\u00e9"]}"#, #"[1]"#] {
                tally.compare(Data(bytes[..<at] + Array(insert.utf8) + bytes[at...]), "'\(insert)' at \(at)")
            }
        }
        // Every ASCII character of every string, written as an escape.
        for (offset, character) in text.enumerated() where character.isLetter || character == "/" || character == "." {
            let index = text.index(text.startIndex, offsetBy: offset)
            let escape = character == "/" ? #"\/"# : String(format: #"\u%04X"#, character.unicodeScalars.first!.value)
            tally.compare(Data((text[..<index] + escape + text[text.index(after: index)...]).utf8), "escape at \(offset)")
        }
        #expect(tally.bothAccepted >= 200)
    }
}

/// Compares both decoders on one input, as a server's list and as a cache file, and counts.
private struct Tally {
    var inputs = 0
    var bothAccepted = 0
    var bothRejected = 0
    /// New refusals of what the reference accepted, by reason.
    var stricter: [String: Int] = [:]
    var reasons: Set<String> = []

    mutating func compare(_ data: Data, _ label: @autoclosure () -> String) {
        inputs += 1
        check(
            Result { () throws(PinListError) in try ReferencePinListDecoder.list(data) },
            Result { () throws(PinListError) in try PinList(json: data) }, "list", label)
        check(
            Result { () throws(PinListError) in try ReferencePinListDecoder.cacheFile(data) },
            Result { () throws(PinListError) in try CacheFile(json: data) }, "cache file", label)
        compareEntryByEntry(data, label)
    }

    /// `PinList.forEachEntry` (the large static list's path) must hand over exactly the pins
    /// `PinList(json:)` keeps, in order, and refuse what it refuses with the same reason.
    private func compareEntryByEntry(_ data: Data, _ label: () -> String) {
        var handed: [Pin] = []
        let streamed = Result { () throws(PinListError) in try PinList.forEachEntry(json: data) { handed.append($0) } }
        switch (Result { () throws(PinListError) in try PinList(json: data) }, streamed) {
        case (.success(let whole), .success(let rest)):
            #expect(rest.pins.isEmpty, "forEachEntry kept pins for \(label())")
            #expect(handed == whole.pins, "forEachEntry: other entries for \(label())")
            #expect(rest.domainsConfig == whole.domainsConfig, "forEachEntry: other domainsConfig for \(label())")
        case (.failure(let whole), .failure(let error)):
            #expect(
                error.reason == whole.reason && error.code == whole.code,
                "forEachEntry: '\(error.reason)' instead of '\(whole.reason)' for \(label())")
        default:
            Issue.record("forEachEntry decided otherwise than PinList(json:) for \(label())")
        }
    }

    private mutating func check<Value: Equatable>(
        _ reference: Result<Value, PinListError>, _ new: Result<Value, PinListError>,
        _ mode: String, _ label: () -> String
    ) {
        switch (reference, new) {
        case (.success(let old), .success(let value)):
            bothAccepted += 1
            #expect(old == value, "\(mode): different values for \(label())")
        case (.failure(let old), .success):
            Issue.record("\(mode): accepted what the reference refused (\(old.reason)): \(label())")
        case (.success, .failure(let error)):
            #expect(Self.isDeliberatelyStricter(error.reason), "\(mode): refused (\(error.reason)) what the reference accepted: \(label())")
            stricter[Self.kind(error.reason), default: 0] += 1
        case (.failure(let old), .failure(let error)):
            bothRejected += 1
            reasons.insert(error.reason.replacing(/\d+/, with: "N"))
            let sameMessage = old.reason == error.reason
            // The reference's syntax errors were path-less, and it called some numbers in the
            // metadata "not valid JSON": the new message may be more precise, never less.
            let morePrecise =
                old.reason == "not valid JSON"
                && (error.reason.hasPrefix("not valid JSON (") || error.reason.hasPrefix("pinkeeper."))
            // An unknown mode is now a format this version does not read (unsupported-format),
            // reported once the rest of the file is valid, not a content error of its own.
            let unknownMode = old.reason == "pinkeeper.mode is invalid"
            #expect(
                sameMessage || morePrecise || unknownMode || Self.isDeliberatelyStricter(error.reason),
                "\(mode): '\(error.reason)' instead of '\(old.reason)' for \(label())")
            #expect(!sameMessage || old.code == error.code, "\(mode): \(error.code) instead of \(old.code) for \(label())")
        }
    }

    /// The reasons only the new decoder gives (see `PinListDecoderStrictnessTests`).
    static func isDeliberatelyStricter(_ reason: String) -> Bool {
        reason.hasPrefix("not valid JSON (") || reason.hasSuffix(" appears more than once")
            || reason.hasSuffix(" is not an integer") || reason.hasSuffix(" is not the base64 of a 32-byte SHA-256 digest")
    }

    private static func kind(_ reason: String) -> String { reason.replacing(/\d+/, with: "N") }
}

/// Lists and cache files built from random choices: members in any order, any value of any
/// type in any field now and then, unknown members of any shape, escapes, odd whitespace.
enum Generated {
    static let smallCacheFile = Data(
        """
        {"fingerprints": [
          {"name": "api.example.com", "fingerprint": "AQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQE=",\
         "expires": 1790000000, "key": "3f1c0c6a9b2e4d71"},
          {"name": "api.example.com", "fingerprint": "AgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgI=",\
         "expires": 1780000000, "depth": 1, "signature": "c2ln"}
        ],
        "domainsConfig": {"sslPinningRequiredForUnlisted": true,\
         "domains": [{"name": "api.example.com", "sslPinningRequired": false}], "key": "3f1c0c6a9b2e4d71"},
        "pinkeeper": {"format": 1, "store": "banking", "mode": "challenge",\
         "source": "https://mus.example.com/app/init?appName=banking", "updated": 1763770000, "nextUpdate": 1764374800}}

        """.utf8)

    static func document(_ random: inout SplitMix64) -> String {
        var members: [(String, String)] = []
        let entries = (0..<Int(random.next() % 4)).map { _ in entry(&random) }
        if chance(&random, 95) { members.append(("fingerprints", often(&random, "[" + entries.joined(separator: ",") + "]"))) }
        if chance(&random, 40) { members.append(("domainsConfig", often(&random, domainsConfig(&random)))) }
        if chance(&random, 80) { members.append(("pinkeeper", often(&random, metadata(&random)))) }
        return object(members, &random)
    }

    private static func entry(_ random: inout SplitMix64) -> String {
        var members: [(String, String)] = []
        let digests = [
            "\"AQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQE=\"", "\"AgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgI=\"",
            "\"AQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQF=\"", "\"AQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQ==\"",
            "\"AQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQE\"", "\"\\u0041QEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQE=\"",
        ]
        if chance(&random, 95) { members.append(("name", often(&random, string(&random)))) }
        if chance(&random, 95) { members.append(("fingerprint", often(&random, pick(&random, digests)))) }
        if chance(&random, 95) { members.append(("expires", often(&random, integer(&random)))) }
        if chance(&random, 30) { members.append(("depth", often(&random, pick(&random, ["0", "1", "2", "-1", "null"])))) }
        if chance(&random, 30) { members.append(("signature", often(&random, string(&random)))) }
        if chance(&random, 40) { members.append(("key", often(&random, "\"3f1c0c6a9b2e4d71\""))) }
        return object(members, &random)
    }

    private static func domainsConfig(_ random: inout SplitMix64) -> String {
        var members: [(String, String)] = []
        let domains = (0..<Int(random.next() % 3)).map { _ in
            var domain: [(String, String)] = []
            if chance(&random, 95) { domain.append(("name", often(&random, string(&random)))) }
            if chance(&random, 95) { domain.append(("sslPinningRequired", often(&random, pick(&random, ["true", "false"])))) }
            return object(domain, &random)
        }
        if chance(&random, 95) { members.append(("sslPinningRequiredForUnlisted", often(&random, pick(&random, ["true", "false"])))) }
        if chance(&random, 95) { members.append(("domains", often(&random, "[" + domains.joined(separator: ",") + "]"))) }
        if chance(&random, 40) { members.append(("key", often(&random, "\"3f1c0c6a9b2e4d71\""))) }
        return object(members, &random)
    }

    private static func metadata(_ random: inout SplitMix64) -> String {
        var members: [(String, String)] = []
        if chance(&random, 97) { members.append(("format", often(&random, pick(&random, ["1", "1", "1", "2"])))) }
        if chance(&random, 97) { members.append(("store", often(&random, string(&random)))) }
        if chance(&random, 97) { members.append(("source", often(&random, string(&random)))) }
        if chance(&random, 97) { members.append(("updated", often(&random, integer(&random)))) }
        if chance(&random, 97) { members.append(("nextUpdate", often(&random, integer(&random)))) }
        if chance(&random, 50) {
            members.append(("mode", often(&random, pick(&random, ["\"challenge\"", "\"static\"", "null", "\"other\""]))))
        }
        return object(members, &random)
    }

    /// Members in a random order, sometimes with unknown ones or a duplicate, random whitespace.
    private static func object(_ known: [(String, String)], _ random: inout SplitMix64) -> String {
        var members = known
        if chance(&random, 20) { members.append(("comment", unknownValue(&random, depth: 0))) }
        if chance(&random, 3), let first = members.first { members.append((first.0, unknownValue(&random, depth: 2))) }
        members.shuffle(using: &random)
        let space = { (random: inout SplitMix64) in pick(&random, ["", "", " ", "\n  ", "\t", "\r\n"]) }
        let body = members.map { name, value in
            space(&random) + keyText(name, &random) + space(&random) + ":" + space(&random) + value + space(&random)
        }
        return "{" + body.joined(separator: ",") + "}"
    }

    /// A member name, now and then with an escaped first letter (still the same name).
    private static func keyText(_ name: String, _ random: inout SplitMix64) -> String {
        guard chance(&random, 5), let first = name.unicodeScalars.first else { return "\"\(name)\"" }
        return String(format: "\"\\u%04x", first.value) + name.dropFirst() + "\""
    }

    /// The value usually; now and then one of another type (or a tricky one) in its place.
    private static func often(_ random: inout SplitMix64, _ value: String) -> String {
        chance(&random, 92) ? value : unknownValue(&random, depth: 1)
    }

    private static func unknownValue(_ random: inout SplitMix64, depth: Int) -> String {
        let scalars = [
            "null", "true", "false", "0", "-0", "1.0", "1e3", "-1", "1.5", "\"\"", "\"x\"", "\"\\ud83d\\ude00\"",
            "99999999999999999999", "-9223372036854775808", "{}", "[]", "\"1700000000\"",
        ]
        if depth < 3, chance(&random, 25) {
            let items = (0..<Int(random.next() % 3)).map { _ in unknownValue(&random, depth: depth + 1) }
            return chance(&random, 50)
                ? "[" + items.joined(separator: ",") + "]"
                : "{" + items.enumerated().map { "\"m\($0.offset)\":\($0.element)" }.joined(separator: ",") + "}"
        }
        return pick(&random, scalars)
    }

    private static func string(_ random: inout SplitMix64) -> String {
        pick(
            &random,
            [
                "\"api.example.com\"", "\"*.example.com\"", "\"\"", "\"caf\u{e9}.example\"", "\"caf\\u00e9.example\"",
                "\"a\\\"b\\\\c\\/d\\b\\f\\n\\r\\t\"", "\"\\u0000\"", "\"\\ud83d\\ude00\"", "\"\u{1F600}\"", "\"https://x/?a=1&b=2\"",
            ])
    }

    private static func integer(_ random: inout SplitMix64) -> String {
        pick(
            &random,
            [
                "1790000000", "0", "-0", "-1", "9223372036854775807", "-9223372036854775808", "9223372036854775808",
                "1790000000.5", "4102444800", "17e8", "1.0", "1790000000", "1790000000",
            ])
    }

    private static func chance(_ random: inout SplitMix64, _ percent: UInt64) -> Bool { random.next() % 100 < percent }

    private static func pick(_ random: inout SplitMix64, _ choices: [String]) -> String {
        choices[Int(random.next() % UInt64(choices.count))]
    }
}
