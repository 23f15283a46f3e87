import Foundation
import PinKeeper
import Testing

@Suite("CacheFile encoding and decoding")
struct CacheFileTests {
    static let domains = DomainsConfig(
        sslPinningRequiredForUnlisted: false,
        domains: [
            .init(name: "bypass.example.com", sslPinningRequired: false),
            .init(name: "api.example.com", sslPinningRequired: true),
        ])

    static func sample(
        pins: [Pin]? = nil, domainsConfig: DomainsConfig? = domains, store: String = "banking",
        source: String = "https://mus.example.com/app/init?appName=banking"
    ) -> CacheFile {
        let list = PinList(
            pins: pins ?? [
                Sample.pin("api.example.com", 0x01, expires: 4_102_444_800, signature: "MEUCIQ=="),
                Sample.pin("api.example.com", 0x02, expires: 4_000_000_000, depth: 1),
            ], domainsConfig: domainsConfig)
        return CacheFile(
            list: list,
            metadata: .init(
                store: store, source: source, updated: 1_763_770_000,
                nextUpdate: 1_764_374_800))
    }

    /// The encoded bytes as Foundation's own JSON parser sees them.
    static func object(_ file: CacheFile) throws -> [String: Any] {
        let parsed = try JSONSerialization.jsonObject(with: file.encoded())
        return try #require(parsed as? [String: Any])
    }

    static func entries(_ file: CacheFile) throws -> [[String: Any]] {
        try #require(object(file)["fingerprints"] as? [[String: Any]])
    }

    @Test func roundTripPreservesEverything() throws {
        let file = Self.sample()
        #expect(try CacheFile(json: file.encoded()) == file)
    }

    @Test func roundTripOfAnEmptyListWithoutDomainsConfig() throws {
        let file = Self.sample(pins: [], domainsConfig: nil)
        let decoded = try CacheFile(json: file.encoded())
        #expect(decoded == file)
        #expect(try Self.entries(file).isEmpty)
    }

    @Test func encodedOutputHasTheDocumentedKeys() throws {
        let object = try Self.object(Self.sample())
        #expect(Set(object.keys) == ["fingerprints", "domainsConfig", "pinkeeper"])
        let meta = try #require(object["pinkeeper"] as? [String: Any])
        #expect(Set(meta.keys) == ["format", "store", "source", "updated", "nextUpdate"])
        #expect(meta["format"] as? Int == CacheFile.formatVersion)
        #expect(meta["store"] as? String == "banking")
        #expect(meta["source"] as? String == "https://mus.example.com/app/init?appName=banking")
        #expect((meta["updated"] as? NSNumber)?.int64Value == 1_763_770_000)
        #expect((meta["nextUpdate"] as? NSNumber)?.int64Value == 1_764_374_800)
    }

    @Test func entriesCarryDepthOnlyWhenNonZeroAndSignatureOnlyWhenKnown() throws {
        let entries = try Self.entries(Self.sample())
        try #require(entries.count == 2)
        #expect(Set(entries[0].keys) == ["name", "fingerprint", "expires", "signature"])
        #expect(entries[0]["signature"] as? String == "MEUCIQ==")
        #expect(entries[0]["fingerprint"] as? String == "AQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQE=")
        #expect((entries[0]["expires"] as? NSNumber)?.int64Value == 4_102_444_800)
        #expect(Set(entries[1].keys) == ["name", "fingerprint", "expires", "depth"])
        #expect(entries[1]["depth"] as? Int == 1)
    }

    @Test func entriesAreWrittenInTheGivenOrder() throws {
        let pins = [Sample.pin("b", 0x01), Sample.pin("a", 0x02), Sample.pin("c", 0x03)]
        let names = try Self.entries(Self.sample(pins: pins)).map { $0["name"] as? String }
        #expect(names == ["b", "a", "c"])
    }

    @Test func domainsConfigIsCopiedAndOmittedWhenAbsent() throws {
        let copied = try #require(Self.object(Self.sample())["domainsConfig"] as? [String: Any])
        #expect(copied["sslPinningRequiredForUnlisted"] as? Bool == false)
        let domains = try #require(copied["domains"] as? [[String: Any]])
        #expect(domains.map { $0["name"] as? String } == ["bypass.example.com", "api.example.com"])
        #expect(domains.map { $0["sslPinningRequired"] as? Bool } == [false, true])
        #expect(try Self.object(Self.sample(domainsConfig: nil))["domainsConfig"] == nil)
    }

    @Test func theCacheIsItselfAValidWultraList() throws {
        let file = Self.sample()
        #expect(try PinList(json: file.encoded()) == file.list)
    }

    static let oddStrings = [
        #"quote " inside"#, #"back\slash"#, "tab\tnew\nline\rreturn", "controls \u{00}\u{01}\u{1F}\u{7F}",
        "ünïcødé 名前 🔒", "separators \u{2028}\u{2029}", #"\u0041 literal"#, "/slash/",
    ]

    @Test(arguments: oddStrings)
    func oddStringsAreEscapedAndSurviveFoundationsParser(_ text: String) throws {
        let file = Self.sample(
            pins: [Sample.pin(text, 0x01, signature: text)],
            domainsConfig: DomainsConfig(
                sslPinningRequiredForUnlisted: true,
                domains: [.init(name: text, sslPinningRequired: false)]),
            store: text, source: text)
        let object = try Self.object(file)
        let entry = try #require((object["fingerprints"] as? [[String: Any]])?.first)
        #expect(entry["name"] as? String == text)
        #expect(entry["signature"] as? String == text)
        #expect((object["pinkeeper"] as? [String: Any])?["store"] as? String == text)
        #expect((object["pinkeeper"] as? [String: Any])?["source"] as? String == text)
        #expect(try CacheFile(json: file.encoded()) == file)
    }

    @Test func controlCharactersAreNeverWrittenRaw() {
        let file = Self.sample(pins: [Sample.pin("a\u{01}b\nc", 0x01)], store: "s\u{1F}")
        let bytes = Array(file.encoded())
        let rawControls = bytes.filter { $0 < 0x20 && $0 != 0x0A }
        #expect(rawControls.isEmpty)
        #expect(String(decoding: file.encoded(), as: UTF8.self).contains(#"a\u0001b\nc"#))
    }

    // MARK: Rejections

    static func cacheJSON(pinkeeper: String?) -> Data {
        let meta = pinkeeper.map { #","pinkeeper":\#($0)"# } ?? ""
        return Sample.document([Sample.entry()], extra: meta)
    }

    @Test func missingMetadataIsRejected() throws {
        let error = #expect(throws: PinListError.self) { try CacheFile(json: Self.cacheJSON(pinkeeper: nil)) }
        #expect(error?.reason.contains("pinkeeper") == true)
        #expect(error?.code == .missingMetadata)
    }

    @Test(arguments: [
        #"{"format":1,"store":"s","source":"u","updated":1}"#,
        #"{"format":1,"store":5,"source":"u","updated":1,"nextUpdate":2}"#,
        #"{"format":"1","store":"s","source":"u","updated":1,"nextUpdate":2}"#,
        #"[]"#,
    ])
    func malformedMetadataIsRejected(_ meta: String) {
        let error = #expect(throws: PinListError.self) { try CacheFile(json: Self.cacheJSON(pinkeeper: meta)) }
        #expect(error?.reason.contains("pinkeeper") == true)
        #expect(error?.code == .invalidContent)
    }

    @Test func otherFormatVersionsAreRejected() {
        let meta = #"{"format":2,"store":"s","source":"u","updated":1,"nextUpdate":2}"#
        let error = #expect(throws: PinListError.self) { try CacheFile(json: Self.cacheJSON(pinkeeper: meta)) }
        #expect(error?.reason == "unsupported cache format 2")
        #expect(error?.code == .unsupportedFormat)
    }

    @Test func aBadListInsideTheCacheIsRejectedWithTheListReason() {
        let data = Sample.document(
            [Sample.entry(expires: "\"x\"")],
            extra: #","pinkeeper":{"format":1,"store":"s","source":"u","updated":1,"nextUpdate":2}"#)
        let error = #expect(throws: PinListError.self) { try CacheFile(json: data) }
        #expect(error?.reason.contains("fingerprints[0].expires") == true)
    }
}
