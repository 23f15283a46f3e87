import Foundation
import PinKeeper
import TestSupport
import Testing

@Suite("PinList parsing")
struct PinListTests {
    // MARK: Upstream vectors

    @Test func allEmptyDocumentIsRejectedBecauseFingerprintsIsMissing() throws {
        let data = try Vectors.data("upstream/ssl-pinning-android/all-empty.json")
        let error = #expect(throws: PinListError.self) { try PinList(json: data) }
        #expect(error?.reason == "fingerprints is missing")
        #expect(error?.description == error?.reason)
        #expect(error?.code == .invalidContent)
    }

    @Test(
        "a refusal's code tells bytes that are not JSON from JSON that is not a list",
        arguments: [
            ("{\"fingerprints\": [", PinListError.Code.notJSON),
            ("\u{FEFF}{\"fingerprints\": []}", .notJSON),
            ("{\"fingerprints\": [], \"x\": 1.}", .notJSON),
            ("[]", .invalidContent),
            ("null", .invalidContent),
            ("{\"fingerprints\": 3}", .invalidContent),
            ("{\"fingerprints\": [], \"fingerprints\": []}", .invalidContent),
            ("{\"fingerprints\": [{\"name\": \"a\", \"fingerprint\": \"AAAA\", \"expires\": 1}]}", .invalidContent),
        ])
    func refusalCodes(_ text: String, _ code: PinListError.Code) {
        let error = #expect(throws: PinListError.self) { try PinList(json: Data(text.utf8)) }
        #expect(error?.code == code, "\(error?.reason ?? "accepted")")
    }

    @Test func emptyFingerprintsParsesToNoPins() throws {
        let list = try Vectors.list("upstream/ssl-pinning-android/empty-fingerprints.json")
        #expect(list.pins.isEmpty)
        #expect(list.domainsConfig == nil)
    }

    @Test func staticListFromAndroidParsesEveryField() throws {
        let list = try Vectors.list("upstream/ssl-pinning-android/static-list-github-2024.json")
        let pin = try #require(list.pins.first)
        #expect(list.pins.count == 1)
        #expect(pin.name == "github.com")
        #expect(pin.fingerprintBase64 == "kqN/vV4hpTqVxxbhFE9EL1grlND6/Gc+tnF6TrUaiKc=")
        #expect(pin.fingerprint.count == 32)
        #expect(pin.expires == 1_710_460_799)
        #expect(pin.depth == 0)
        #expect(pin.signature == "MEUCICB69UpMPOdtrsR6XcJqHEh2L2RO4oSJ3SZ7BYnTBJbGAiEAnZ7rEWdMVGwa59Wx5QbAorEFxXH89Iu0CnqWa96Eda0=")
    }

    @Test func duplicateEntriesAreAllKeptByTheParserAndShareOneIdentity() throws {
        let list = try Vectors.list("upstream/ssl-pinning-android/duplicate-entries.json")
        #expect(list.pins.count == 3)
        #expect(Set(list.pins.map(\.identity)).count == 1)
        #expect(Set(list.pins.compactMap(\.signature)).count == 2)
    }

    @Test func fallbackExampleKeepsAnEmptySignature() throws {
        let list = try Vectors.list("upstream/ssl-pinning-ios/fallback-example-readme.json")
        let pin = try #require(list.pins.first)
        #expect(list.pins.count == 1)
        #expect(pin.name == "github.com")
        #expect(pin.fingerprintBase64 == "MRFQDEpmASza4zPsP8ocnd5FyVREDn7kE3Fr/zZjwHQ=")
        #expect(pin.expires == 1_591_185_600)
        #expect(pin.signature == "")
    }

    @Test func challengeV2BodyCarriesDepthAndDomainsConfig() throws {
        let list = try Vectors.list("generated-challenge-v2-depth/response-body.json")
        #expect(list.pins.map(\.depth) == [0, 1])
        #expect(list.pins.map(\.fingerprint) == [Sample.digest(0x01), Sample.digest(0x02)])
        #expect(list.pins.allSatisfy { $0.name == "api.example.com" && $0.expires == 4_102_444_800 && $0.signature == nil })
        #expect(
            list.domainsConfig
                == DomainsConfig(
                    sslPinningRequiredForUnlisted: true,
                    domains: [
                        .init(name: "bypass.example.com", sslPinningRequired: false),
                        .init(name: "api.example.com", sslPinningRequired: true),
                    ]))
    }

    @Test func domainsConfigExampleWithoutFingerprintsParses() throws {
        let list = try Vectors.list("upstream/ssl-pinning-ios/domainsconfig-example-readme-1.9.json")
        #expect(list.pins.isEmpty)
        #expect(list.domainsConfig?.domains.map(\.name) == ["bypass.example.com", "api.example.com"])
    }

    // MARK: Leniency

    @Test func unknownFieldsAreIgnored() throws {
        let data = Sample.document(
            [Sample.entry(extra: #","comment":"x","future":{"a":[1,2]}"#)],
            extra: #","timestamp":1700000000,"verifyVersionResult":{"update":"NOT_REQUIRED"},"pinkeeper":{"format":99}"#)
        let list = try PinList(json: data)
        #expect(list.pins == [Sample.pin("api.example.com", 0x01, expires: 4_102_444_800)])
    }

    @Test func explicitZeroDepthEqualsAbsentDepth() throws {
        let withDepth = try PinList(json: Sample.document([Sample.entry(extra: #","depth":0"#)]))
        let without = try PinList(json: Sample.document([Sample.entry()]))
        #expect(withDepth == without)
    }

    // MARK: Rejections name the offending field

    struct BadInput: Sendable, CustomTestStringConvertible {
        var testDescription: String
        var json: Data
        var field: String
    }

    static let badInputs: [BadInput] = [
        .init(
            testDescription: "expires as a string", json: Sample.document([Sample.entry(expires: "\"1710460799\"")]),
            field: "fingerprints[0].expires"),
        .init(
            testDescription: "expires as a float", json: Sample.document([Sample.entry(expires: "1710460799.5")]),
            field: "fingerprints[0].expires"),
        .init(
            testDescription: "expires beyond Int64", json: Sample.document([Sample.entry(expires: "99999999999999999999")]),
            field: "fingerprints[0].expires"),
        .init(
            testDescription: "expires as a boolean", json: Sample.document([Sample.entry(expires: "true")]),
            field: "fingerprints[0].expires"),
        .init(
            testDescription: "expires null", json: Sample.document([Sample.entry(expires: "null")]),
            field: "fingerprints[0].expires"),
        .init(
            testDescription: "name as a number", json: Sample.document([Sample.entry(name: "42")]),
            field: "fingerprints[0].name"),
        .init(
            testDescription: "name missing",
            json: Data(#"{"fingerprints":[{"fingerprint":"AQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQE=","expires":1}]}"#.utf8),
            field: "fingerprints[0].name"),
        .init(
            testDescription: "fingerprint not base64", json: Sample.document([Sample.entry(fingerprint: "\"not base64!\"")]),
            field: "fingerprints[0].fingerprint"),
        .init(
            testDescription: "fingerprint URL-safe alphabet",
            json: Sample.document([Sample.entry(fingerprint: "\"_-8BAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQE=\"")]),
            field: "fingerprints[0].fingerprint"),
        .init(
            testDescription: "fingerprint of 31 bytes",
            json: Sample.document([Sample.entry(fingerprint: "\"\(Data(repeating: 1, count: 31).base64EncodedString())\"")]),
            field: "fingerprints[0].fingerprint"),
        .init(
            testDescription: "fingerprint of 33 bytes",
            json: Sample.document([Sample.entry(fingerprint: "\"\(Data(repeating: 1, count: 33).base64EncodedString())\"")]),
            field: "fingerprints[0].fingerprint"),
        .init(
            testDescription: "negative depth", json: Sample.document([Sample.entry(extra: #","depth":-1"#)]),
            field: "fingerprints[0].depth"),
        .init(
            testDescription: "depth as a float", json: Sample.document([Sample.entry(extra: #","depth":1.5"#)]),
            field: "fingerprints[0].depth"),
        .init(
            testDescription: "depth as a string", json: Sample.document([Sample.entry(extra: #","depth":"1""#)]),
            field: "fingerprints[0].depth"),
        .init(
            testDescription: "signature as a number", json: Sample.document([Sample.entry(extra: #","signature":7"#)]),
            field: "fingerprints[0].signature"),
        .init(
            testDescription: "second entry bad", json: Sample.document([Sample.entry(), Sample.entry(expires: "\"soon\"")]),
            field: "fingerprints[1].expires"),
        .init(
            testDescription: "fingerprints not an array", json: Data(#"{"fingerprints":{}}"#.utf8),
            field: "fingerprints"),
        .init(
            testDescription: "domainsConfig flag as a string",
            json: Sample.document([], extra: #","domainsConfig":{"sslPinningRequiredForUnlisted":"yes","domains":[]}"#),
            field: "domainsConfig.sslPinningRequiredForUnlisted"),
    ]

    @Test(arguments: badInputs)
    func rejectionNamesTheFieldPath(_ input: BadInput) {
        let reason = Sample.rejection(input.json)
        #expect(reason?.contains(input.field) == true, "reason: \(reason ?? "(parsed)")")
    }

    @Test func typeMismatchSaysWhatWasExpected() {
        #expect(Sample.rejection(Sample.document([Sample.entry(expires: "\"x\"")])) == "fingerprints[0].expires is not an integer")
        #expect(Sample.rejection(Sample.document([Sample.entry(name: "1")])) == "fingerprints[0].name is not a string")
    }

    @Test(arguments: ["", "not json", "[1,2]", #"{"fingerprints":["#])
    func nonListDocumentsAreRejected(_ text: String) {
        #expect(Sample.rejection(Data(text.utf8)) != nil)
    }
}
