import Foundation
import PinKeeper
import TestSupport
import Testing

/// Where `JSONDecoder` was lenient, `PinListDecoder` refuses: each case here was accepted by the
/// reference decoder (checked) and is refused now, with a message that says why.
@Suite("PinListDecoder: deliberate strictness")
struct PinListDecoderStrictnessTests {
    static let digest = "AQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQE="

    struct Case: Sendable, CustomTestStringConvertible {
        var testDescription: String
        var bytes: [UInt8]
        /// A part of the new reason.
        var reason: String
        init(_ description: String, _ text: String, _ reason: String) {
            self.init(description, Array(text.utf8), reason)
        }
        init(_ description: String, _ bytes: [UInt8], _ reason: String) {
            testDescription = description
            self.bytes = bytes
            self.reason = reason
        }
    }

    static func list(entry: String = #""name":"a","fingerprint":"\#(digest)","expires":1"#, extra: String = "") -> String {
        #"{"fingerprints":[{\#(entry)}]\#(extra)}"#
    }

    /// Text and raw bytes, concatenated.
    static func bytes(_ parts: Any...) -> [UInt8] {
        parts.flatMap { part in (part as? [Int]).map { $0.map(UInt8.init) } ?? Array((part as! String).utf8) }
    }

    static let refusedNow: [Case] = [
        // A member read here given twice: JSONDecoder took the first, Python's json the last.
        Case(
            "fingerprints twice", #"{"fingerprints":[],"fingerprints":[{"name":"a","fingerprint":"\#(digest)","expires":1}]}"#,
            "fingerprints appears more than once"),
        Case(
            "an entry's name twice", list(entry: #""name":"a","name":"b","fingerprint":"\#(digest)","expires":1"#),
            "fingerprints[0].name appears more than once"),
        Case(
            "a name twice, once escaped", list(entry: #""name":"a","\u006eame":"b","fingerprint":"\#(digest)","expires":1"#),
            "fingerprints[0].name appears more than once"),
        Case(
            "expires twice", list(entry: #""name":"a","fingerprint":"\#(digest)","expires":1,"expires":2"#),
            "fingerprints[0].expires appears more than once"),
        Case(
            "domainsConfig's flag twice",
            list(extra: #","domainsConfig":{"sslPinningRequiredForUnlisted":true,"sslPinningRequiredForUnlisted":false,"domains":[]}"#),
            "domainsConfig.sslPinningRequiredForUnlisted appears more than once"),
        // Integers are written as integers.
        Case(
            "expires 1.0", list(entry: #""name":"a","fingerprint":"\#(digest)","expires":1.0"#), "fingerprints[0].expires is not an integer"
        ),
        Case(
            "expires 1e3", list(entry: #""name":"a","fingerprint":"\#(digest)","expires":1e3"#), "fingerprints[0].expires is not an integer"
        ),
        Case(
            "expires 10e-1", list(entry: #""name":"a","fingerprint":"\#(digest)","expires":10e-1"#),
            "fingerprints[0].expires is not an integer"),
        Case(
            "expires -0.0", list(entry: #""name":"a","fingerprint":"\#(digest)","expires":-0.0"#),
            "fingerprints[0].expires is not an integer"),
        Case(
            "depth 1E+0", list(entry: #""name":"a","fingerprint":"\#(digest)","expires":1,"depth":1E+0"#),
            "fingerprints[0].depth is not an integer"),
        // Lone surrogates, also where nothing reads them.
        Case("a lone high surrogate in an unknown member", list(extra: #","x":"\ud800""#), "a lone surrogate escape"),
        Case("a lone low surrogate in an unknown member", list(extra: #","x":"\udc00\ud800""#), "a lone surrogate escape"),
        Case("a high surrogate before a non-surrogate", list(extra: #","x":"\ud800\u0041""#), "a lone surrogate escape"),
        // UTF-8 only, valid everywhere.
        Case("a UTF-8 byte order mark", bytes([0xEF, 0xBB, 0xBF], list()), "byte order mark"),
        Case("UTF-16 with a byte order mark", [0xFF, 0xFE] + list().utf8.flatMap { [$0, 0] }, "not valid JSON ("),
        Case("UTF-16 without one", list().utf8.flatMap { [$0, 0] }, "not valid JSON ("),
        Case("0xFF in an unknown member", bytes(#"{"fingerprints":[],"x":""#, [0xFF], #""}"#), "invalid UTF-8"),
        Case("an overlong '/' in an unknown member", bytes(#"{"fingerprints":[],"x":""#, [0xC0, 0xAF], #""}"#), "invalid UTF-8"),
        Case(
            "an encoded surrogate in an unknown member", bytes(#"{"fingerprints":[],"x":""#, [0xED, 0xA0, 0x80], #""}"#), "invalid UTF-8"),
        Case("a truncated sequence in an unknown member", bytes(#"{"fingerprints":[],"x":""#, [0xE2, 0x82], #""}"#), "invalid UTF-8"),
        Case(
            "beyond U+10FFFF in an unknown member", bytes(#"{"fingerprints":[],"x":""#, [0xF4, 0x90, 0x80, 0x80], #""}"#), "invalid UTF-8"),
        // RFC 8259 syntax inside members nobody reads.
        Case("a trailing comma in the document", #"{"fingerprints":[],}"#, "not valid JSON (unexpected '}'"),
        Case("a raw tab in an unknown string", "{\"fingerprints\":[],\"x\":\"\t\"}", "a control character in a string"),
        Case("an invalid escape in an unknown string", #"{"fingerprints":[],"x":"\q"}"#, "an invalid escape"),
        Case("a bad \\u escape in an unknown string", #"{"fingerprints":[],"x":"\uzzzz"}"#, "an invalid escape"),
        Case("'-' as a number", #"{"fingerprints":[],"x":-}"#, "a number without digits"),
        Case("'1e' as a number", #"{"fingerprints":[],"x":1e}"#, "a number with a missing digit"),
        Case("a leading zero", #"{"fingerprints":[],"x":01}"#, "not valid JSON (unexpected '1'"),
        // Base64: exactly 43 characters and one '='.
        Case(
            "a digest with '=='", list(entry: #""name":"a","fingerprint":"\#(digest)=","expires":1"#),
            "fingerprints[0].fingerprint is not the base64 of a 32-byte SHA-256 digest"),
        Case(
            "a digest with data after '='", list(entry: #""name":"a","fingerprint":"\#(digest.dropLast(2))=A","expires":1"#),
            "fingerprints[0].fingerprint is not the base64 of a 32-byte SHA-256 digest"),
    ]

    @Test(arguments: refusedNow)
    func refusedWhereJSONDecoderAccepted(_ input: Case) {
        let data = Data(input.bytes)
        #expect(throws: Never.self, "the reference accepted it") { try ReferencePinListDecoder.list(data) }
        let error = #expect(throws: PinListError.self) { try PinList(json: data) }
        #expect(error?.reason.contains(input.reason) == true, "reason: \(error?.reason ?? "(accepted)")")
    }

    @Test func theStrictnessAppliesToCacheFilesToo() {
        let file = #"{"fingerprints":[],"pinkeeper":{"format":1,"store":"s","source":"u","updated":1.0,"nextUpdate":2}}"#
        #expect(throws: Never.self) { try ReferencePinListDecoder.cacheFile(Data(file.utf8)) }
        #expect(throws: PinListError(.invalidContent, reason: "pinkeeper.updated is not an integer")) {
            try CacheFile(json: Data(file.utf8))
        }
        let twice = #"{"fingerprints":[],"pinkeeper":{"format":1,"format":2,"store":"s","source":"u","updated":1,"nextUpdate":2}}"#
        #expect(throws: PinListError(.invalidContent, reason: "pinkeeper.format appears more than once")) {
            try CacheFile(json: Data(twice.utf8))
        }
    }

    // MARK: What is still accepted

    @Test func unknownMembersOfAnyShapeAndRepeatedOnesAreSkipped() throws {
        let text = Self.list(
            entry: #""x":{"a":[1,{"b":null}]},"name":"a","x":[],"fingerprint":"\#(Self.digest)","expires":1,"y":"\u00e9\ud83d\ude00""#,
            extra: #","timestamp":-1.5e-3,"timestamp":{"x":[true,false]},"verifyVersionResult":{"update":"NOT_REQUIRED"}"#)
        let list = try PinList(json: Data(text.utf8))
        #expect(list == (try ReferencePinListDecoder.list(Data(text.utf8))))
        #expect(list.pins.map(\.name) == ["a"])
    }

    @Test func cacheOnlyMembersOfAnyShapeAreIgnoredInAServersList() throws {
        let text = Self.list(
            entry: #""name":"a","fingerprint":"\#(Self.digest)","expires":1,"key":{"k":1},"key":7"#,
            extra: #","pinkeeper":[1],"pinkeeper":"x","domainsConfig":{"sslPinningRequiredForUnlisted":true,"domains":[],"key":[]}"#)
        let list = try PinList(json: Data(text.utf8))
        #expect(list.pins.map(\.key) == [nil])
        #expect(list.domainsConfig?.key == nil)
        // Read as a cache file, the same members are pinkeeper's and must be well formed.
        #expect(throws: PinListError(.invalidContent, reason: "fingerprints[0].key appears more than once")) {
            try CacheFile(json: Data(text.utf8))
        }
    }

    @Test func integersAtTheLimitsAndMinusZero() throws {
        for (written, value) in [("-0", Int64(0)), ("9223372036854775807", .max), ("-9223372036854775808", .min), ("0", 0)] {
            let list = try PinList(json: Data(Self.list(entry: #""name":"a","fingerprint":"\#(Self.digest)","expires":\#(written)"#).utf8))
            #expect(list.pins.first?.expires == value)
        }
        for written in ["9223372036854775808", "-9223372036854775809", "99999999999999999999999"] {
            let data = Data(Self.list(entry: #""name":"a","fingerprint":"\#(Self.digest)","expires":\#(written)"#).utf8)
            #expect(throws: PinListError(.invalidContent, reason: "fingerprints[0].expires is not an integer")) { try PinList(json: data) }
        }
    }

    @Test func escapesAndNonASCIINamesDecodeAsBefore() throws {
        let name = #"a\"b\\c\/d\b\f\n\r\t\u0000\u00e9\ud83d\ude00é😀"#
        let data = Data(Self.list(entry: #""name":"\#(name)","fingerprint":"\#(Self.digest)","expires":1"#).utf8)
        let list = try PinList(json: data)
        #expect(list.pins.first?.name == "a\"b\\c/d\u{8}\u{c}\n\r\t\u{0}é😀é😀")
        #expect(list == (try ReferencePinListDecoder.list(data)))
    }

    @Test func base64AcceptsWhatFoundationAndPythonBothAccept() throws {
        // The two unused low bits of the last character are ignored, as both do.
        let loose = String(Self.digest.dropLast(2)) + "F="
        let data = Data(Self.list(entry: #""name":"a","fingerprint":"\#(loose)","expires":1"#).utf8)
        #expect(try PinList(json: data) == (try ReferencePinListDecoder.list(data)))
        // Every 32-byte value survives the trip through the published base64.
        var random = SplitMix64(seed: 7)
        for _ in 0..<500 {
            let bytes = (0..<32).map { _ in UInt8(truncatingIfNeeded: random.next()) }
            let pin = Pin(name: "a", fingerprint: bytes, expires: 1)
            let text = Self.list(entry: #""name":"a","fingerprint":"\#(pin.fingerprintBase64)","expires":1"#)
            #expect(try PinList(json: Data(text.utf8)).pins == [pin])
        }
        for bad in [
            String(Self.digest.dropLast()), Self.digest.replacingOccurrences(of: "Q", with: "-"),
            Self.digest.replacingOccurrences(of: "Q", with: "_"), " " + Self.digest.dropFirst(), #"\n"# + Self.digest.dropFirst(2),
        ] {
            let data = Data(Self.list(entry: #""name":"a","fingerprint":"\#(bad)","expires":1"#).utf8)
            #expect(
                throws: PinListError(.invalidContent, reason: "fingerprints[0].fingerprint is not the base64 of a 32-byte SHA-256 digest")
            ) {
                try PinList(json: data)
            }
        }
    }

    // MARK: Nesting

    @Test func nestingInUnknownMembersIsLimitedTo512LevelsLikeJSONDecoder() throws {
        func nested(_ levels: Int) -> Data {
            Data((#"{"fingerprints":[],"x":"# + String(repeating: "[", count: levels) + String(repeating: "]", count: levels) + "}").utf8)
        }
        // The document's object is the first level.
        #expect(try PinList(json: nested(511)) == (try ReferencePinListDecoder.list(nested(511))))
        #expect(throws: PinListError.self) { try ReferencePinListDecoder.list(nested(512)) }
        let error = #expect(throws: PinListError.self) { try PinList(json: nested(512)) }
        #expect(error?.reason.contains("nested deeper than 512 levels") == true)
    }

    @Test func hostileNestingNeedsNoStack() async throws {
        // A million open brackets in an unknown member, decoded on a thread with a 64 KiB stack:
        // a recursive skip would overflow it long before the limit is noticed.
        let data = Data((#"{"fingerprints":[],"x":"# + String(repeating: #"{"a":["#, count: 1_000_000)).utf8)
        let reason = await withCheckedContinuation { continuation in
            let thread = Thread {
                continuation.resume(returning: (try? PinList(json: data)) == nil ? Sample.rejection(data) : nil)
            }
            thread.stackSize = 64 << 10
            thread.start()
        }
        #expect(reason?.contains("nested deeper than 512 levels") == true)
    }

    // MARK: Which problem is reported

    @Test func aSyntaxErrorAnywhereComesFirst() {
        let data = Data(#"{"fingerprints":[{"name":1}],"x":[}"#.utf8)
        #expect(Sample.rejection(data)?.hasPrefix("not valid JSON (") == true)
    }

    @Test func problemsAreReportedInTheOrderJSONDecoderMetThem() {
        // A later entry's type beats an earlier entry's base64; fingerprints beats domainsConfig
        // wherever they are in the document; within an entry, name comes before expires.
        let cases = [
            #"{"fingerprints":[{"name":"a","fingerprint":"x","expires":1},{"name":1,"fingerprint":"x","expires":1}]}"#,
            #"{"domainsConfig":1,"fingerprints":[{"expires":"x","fingerprint":"x"}]}"#,
            #"{"fingerprints":[{"name":"a","fingerprint":"x","expires":1,"depth":-1}],"domainsConfig":{"domains":[1]}}"#,
            #"{"fingerprints":[{"name":"a","fingerprint":"\#(Self.digest)","expires":1,"depth":-1}"#
                + #",{"name":"a","fingerprint":"x","expires":1}]}"#,
        ]
        for text in cases {
            let data = Data(text.utf8)
            let old = #expect(throws: PinListError.self) { try ReferencePinListDecoder.list(data) }
            #expect(Sample.rejection(data) == old?.reason)
        }
    }
}
