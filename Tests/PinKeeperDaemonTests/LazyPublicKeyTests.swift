import Foundation
import TestSupport
import Testing
@testable import PinKeeperDaemon

/// A configured key is checked in full when read, but decoded into an OpenSSL key (and hashed into
/// its id) only when an update first uses it: `validate` and `status` never pay for that.
@Suite("Public keys decoded on first use")
struct LazyPublicKeyTests {
    /// Key A's SHA-256, first 8 bytes: `printf %s "$key" | base64 -d | sha256sum | cut -c1-16`.
    static let keyAId = "47232337d8ede45b"

    @Test func readingAKeyDoesNotDecodeIt() throws {
        let key = try Vectors.keyA()
        #expect(!key.isDecoded)
        #expect(key.base64 == Vectors.keyABase64)
        #expect(!key.isDecoded)
    }

    @Test func theIdDecodesTheKeyAndIsTheShortHashOfThePoint() throws {
        let key = try Vectors.keyA()
        #expect(key.id == Self.keyAId)
        #expect(key.isDecoded)
    }

    @Test func aFirstVerificationDecodesTheKey() throws {
        let key = try Vectors.keyA()
        let vector = try #require(EntrySignatureVector.all.first { $0.publicKey == Vectors.keyABase64 && $0.expectValid })
        let signature = try #require(Data(base64Encoded: vector.signature))
        let valid = Data(vector.signedString.utf8).withUnsafeBytes { key.isValidSignature(Array(signature), for: $0) }
        #expect(valid)
        #expect(key.isDecoded)
    }

    /// Threads racing for the first use all get the one decoded key, and the same answers.
    @Test func concurrentFirstUsesAgree() throws {
        let key = try Vectors.keyA()
        let vector = try #require(EntrySignatureVector.all.first { $0.publicKey == Vectors.keyABase64 && $0.expectValid })
        let signature = Array(try #require(Data(base64Encoded: vector.signature)))
        let message = Data(vector.signedString.utf8)
        nonisolated(unsafe) let results = UnsafeMutableBufferPointer<Bool>.allocate(capacity: 64)
        defer { results.deallocate() }
        DispatchQueue.concurrentPerform(iterations: 64) { index in
            let valid = message.withUnsafeBytes { key.isValidSignature(signature, for: $0) }
            results[index] = valid && key.id == Self.keyAId
        }
        #expect(results.allSatisfy { $0 })
    }
}
