import Foundation
import PinKeeper
import TestSupport
import Testing
@testable import PinKeeperDaemon

/// One entry of `upstream/entry-signature-vectors.json`.
struct EntrySignatureVector: Decodable, Sendable, CustomTestStringConvertible {
    var id: String
    var publicKey: String
    var signedString: String
    var signature: String
    var expectValid: Bool

    var testDescription: String { id }
    var usesMilliseconds: Bool { id.hasSuffix("-ms") }

    static let all = (try? Vectors.decode([EntrySignatureVector].self, "upstream/entry-signature-vectors.json")) ?? []
}

/// One case of `generated-challenge-v1/negative-cases.json`.
// swift-format-ignore: AlwaysUseLowerCamelCase
// The members are the file's JSON keys.
struct ChallengeCase: Decodable, Sendable, CustomTestStringConvertible {
    var `case`: String
    var challenge: String
    var body_b64: String
    var signature: String
    var expect_valid: Bool

    var testDescription: String { self.case }

    static let all = (try? Vectors.decode([ChallengeCase].self, "generated-challenge-v1/negative-cases.json")) ?? []
}

@Suite("Signature vectors")
struct SignatureVectorTests {
    static func verifies(_ signatureBase64: String, _ message: String, key: String) throws -> Bool {
        let signature = try #require(Data(base64Encoded: signatureBase64))
        return SignatureVerifier(keys: [try PublicKey(base64: key)]).verify(signature: Array(signature), message: Data(message.utf8))
    }

    // MARK: Per-entry vectors

    @Test func everyVectorFileWasLoaded() {
        #expect(EntrySignatureVector.all.count == 6)
        #expect(EntrySignatureVector.all.filter(\.usesMilliseconds).count == 2)
        #expect(ChallengeCase.all.count == 5)
    }

    @Test(arguments: EntrySignatureVector.all)
    func entrySignatureVector(_ vector: EntrySignatureVector) throws {
        #expect(try Self.verifies(vector.signature, vector.signedString, key: vector.publicKey) == vector.expectValid)
    }

    @Test(arguments: EntrySignatureVector.all.filter(\.usesMilliseconds))
    func millisecondVectorsDoNotVerifyInSeconds(_ vector: EntrySignatureVector) throws {
        let milliseconds = try #require(vector.signedString.split(separator: "&").last)
        try #require(milliseconds.hasSuffix("000"))
        let seconds = String(vector.signedString.dropLast(3))
        #expect(try Self.verifies(vector.signature, seconds, key: vector.publicKey) == false)
    }

    // MARK: Generated static list (key B)

    @Test func generatedStaticEntriesVerifyWithKeyB() throws {
        let verifier = try Vectors.verifierB()
        let (expired, valid) = try Vectors.staticList()
        #expect(verifier.verifyEntry(expired))
        #expect(verifier.verifyEntry(valid))
    }

    @Test func signedStringIsNameFingerprintExpires() throws {
        let (expired, _) = try Vectors.staticList()
        // swift-format-ignore: AlwaysUseLowerCamelCase
        // The member is the file's JSON key.
        struct ToolExpectation: Decodable { var signature_base_string: String }
        let expected = try Vectors.decode(ToolExpectation.self, "upstream/ssl-pinning-tool/www.google.com-2018.expected.json")
        #expect(SignatureVerifier.signedString(for: expired) == expected.signature_base_string)
    }

    @Test func readmeOrderNameExpiresFingerprintIsRejected() throws {
        let (expired, valid) = try Vectors.staticList()
        for pin in [expired, valid] {
            let readmeOrder = "\(pin.name)&\(pin.expires)&\(pin.fingerprintBase64)"
            #expect(try Self.verifies(#require(pin.signature), readmeOrder, key: Vectors.keyBBase64()) == false)
        }
    }

    @Test func tamperedEntryFailsVerification() throws {
        let verifier = try Vectors.verifierB()
        let (_, valid) = try Vectors.staticList()
        var later = valid
        later.expires += 1
        var renamed = valid
        renamed.name = "evil.example.com"
        var unsigned = valid
        unsigned.signature = nil
        var garbage = valid
        garbage.signature = "not base64"
        #expect(!verifier.verifyEntry(later))
        #expect(!verifier.verifyEntry(renamed))
        #expect(!verifier.verifyEntry(unsigned))
        #expect(!verifier.verifyEntry(garbage))
    }

    // MARK: Challenge mode

    @Test func challengeV1Verifies() throws {
        let challenge = try Vectors.text("generated-challenge-v1/request-challenge.txt")
        let body = try Vectors.data("generated-challenge-v1/response-body.json")
        let signature = try Vectors.text("generated-challenge-v1/response-signature.b64")
        #expect(try Vectors.verifierB().verifyChallengeResponse(challenge: challenge, body: body, signatureBase64: signature))
    }

    @Test func challengeV1SignedBytesAreChallengeAmpersandBody() throws {
        let challenge = try Vectors.data("generated-challenge-v1/request-challenge.txt")
        let body = try Vectors.data("generated-challenge-v1/response-body.json")
        #expect(try Vectors.data("generated-challenge-v1/signed-bytes.bin") == challenge + Data("&".utf8) + body)
    }

    @Test(arguments: ChallengeCase.all)
    func challengeV1Case(_ item: ChallengeCase) throws {
        let body = try #require(Data(base64Encoded: item.body_b64))
        let valid = try Vectors.verifierB().verifyChallengeResponse(
            challenge: item.challenge, body: body,
            signatureBase64: item.signature)
        #expect(valid == item.expect_valid)
    }

    @Test func challengeV2WithDepthVerifies() throws {
        let challenge = try Vectors.text("generated-challenge-v2-depth/request-challenge.txt")
        let body = try Vectors.data("generated-challenge-v2-depth/response-body.json")
        let signature = try Vectors.text("generated-challenge-v2-depth/response-signature.b64")
        let verifier = try Vectors.verifierB()
        #expect(verifier.verifyChallengeResponse(challenge: challenge, body: body, signatureBase64: signature))
        #expect(!verifier.verifyChallengeResponse(challenge: challenge, body: body + Data(" ".utf8), signatureBase64: signature))
        #expect(!verifier.verifyChallengeResponse(challenge: challenge, body: body, signatureBase64: "%%%"))
    }

    // MARK: Key rotation

    @Test func anyConfiguredKeyIsAccepted() throws {
        let challenge = try Vectors.text("generated-challenge-v1/request-challenge.txt")
        let body = try Vectors.data("generated-challenge-v1/response-body.json")
        let signature = try Vectors.text("generated-challenge-v1/response-signature.b64")
        let (_, entry) = try Vectors.staticList()
        let rotating = SignatureVerifier(keys: [try Vectors.keyA(), try Vectors.keyB()])
        let oldOnly = SignatureVerifier(keys: [try Vectors.keyA()])
        #expect(rotating.verifyChallengeResponse(challenge: challenge, body: body, signatureBase64: signature))
        #expect(rotating.verifyEntry(entry))
        #expect(!oldOnly.verifyChallengeResponse(challenge: challenge, body: body, signatureBase64: signature))
        #expect(!oldOnly.verifyEntry(entry))
        #expect(!SignatureVerifier(keys: []).verifyEntry(entry))
    }

    // MARK: PublicKey parsing

    static func keyBPoint() throws -> [UInt8] {
        Array(try #require(Data(base64Encoded: Vectors.keyBBase64())))
    }

    static func rejection(_ bytes: [UInt8]) -> String? {
        rejection(base64: Data(bytes).base64EncodedString())
    }

    static func rejection(base64: String) -> String? {
        do {
            _ = try PublicKey(base64: base64)
            return nil
        } catch {
            return error.reason
        }
    }

    @Test func bothVectorKeysAreAccepted() throws {
        #expect(try Vectors.keyA().base64 == Vectors.keyABase64)
        #expect(try Vectors.keyB().base64 == Vectors.keyBBase64())
    }

    @Test func keyThatIsNotBase64IsRejected() {
        #expect(Self.rejection(base64: "BC3k not base64!")?.contains("base64") == true)
    }

    @Test func keyOf64BytesIsRejected() throws {
        #expect(Self.rejection(Array(try Self.keyBPoint().dropFirst()))?.contains("64 bytes") == true)
    }

    @Test func key65BytesWithoutUncompressedPrefixIsRejected() throws {
        var point = try Self.keyBPoint()
        point[0] = 0x05
        #expect(Self.rejection(point)?.contains("0x04") == true)
    }

    @Test func compressedPointIsRejected() throws {
        let point = try Self.keyBPoint()
        let compressed = [0x02 | (point[64] & 1)] + point[1...32]
        #expect(Self.rejection(Array(compressed))?.contains("33 bytes") == true)
    }

    @Test func spkiDERIsRejectedWithAHint() throws {
        let pem = try Vectors.text("key-B.public.spki.pem")
        let body = pem.split(separator: "\n").filter { !$0.hasPrefix("-----") }.joined()
        let der = try #require(Data(base64Encoded: body))
        try #require(der.count == 91)
        let reason = Self.rejection(Array(der))
        #expect(reason?.contains("91 bytes") == true)
        #expect(reason?.contains("SPKI") == true)
    }

    @Test func pointOffTheCurveIsRejected() throws {
        var point = try Self.keyBPoint()
        point[64] ^= 0x01
        #expect(Self.rejection(point)?.contains("not a point on the P-256 curve") == true)
    }
}
