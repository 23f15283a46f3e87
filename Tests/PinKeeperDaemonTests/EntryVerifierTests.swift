import PinKeeper
import TestSupport
import Testing
@testable import PinKeeperDaemon

/// `EntryVerifier`: the reused-context verification of static entries answers exactly as one
/// `EVP_DigestVerify` per entry did (docs/protocol.md §4: `name&base64(fingerprint)&expires`).
@Suite("Entry verification with reused OpenSSL contexts")
struct EntryVerifierTests {
    @Test("the signed bytes are SignatureVerifier.signedString, whatever the fingerprint's bytes and the name")
    func signedBytes() throws {
        var verifier = EntryVerifier(keys: [try Vectors.keyB()])
        // A pin's fingerprint is always 32 bytes (`SHA256Digest`); the seed varies them.
        for (name, seed, expires) in [
            ("a.example", 0, Int64(0)), ("b.example", 1, 1), ("c.example", 2, -5), ("d.example", 3, 4_102_444_800),
            ("e.example", 4, Int64.max), ("bücher.example", 32, Int64.min), ("", 5, 7), ("x&y.example", 31, 12),
        ] {
            let pin = Pin(name: name, fingerprint: (0..<32).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 250 &+ seed) }, expires: expires)
            verifier.writeSignedString(pin)
            #expect(verifier.message == Array(SignatureVerifier.signedString(for: pin).utf8), "\(name)")
        }
    }

    @Test("valid entries verify under the key that signed them, and report that key's index")
    func validEntries() throws {
        let (expired, valid) = try Vectors.staticList()
        var onlyB = EntryVerifier(keys: [try Vectors.keyB()])
        #expect(onlyB.keyIndex(expired) == 0)
        #expect(onlyB.keyIndex(valid) == 0)
        var aThenB = EntryVerifier(keys: [try Vectors.keyA(), try Vectors.keyB()])
        #expect(aThenB.keyIndex(valid) == 1)
        var onlyA = EntryVerifier(keys: [try Vectors.keyA()])
        #expect(onlyA.keyIndex(valid) == nil)
        var noKey = EntryVerifier(keys: [])
        #expect(noKey.keyIndex(valid) == nil)
    }

    @Test("a changed field, a missing, malformed or padded signature: not valid, and the context stays usable")
    func tamperedEntries() throws {
        let (_, valid) = try Vectors.staticList()
        var later = valid
        later.expires += 1
        var renamed = valid
        renamed.name = "evil.example.com"
        var otherFingerprint = valid
        otherFingerprint.fingerprint[0] ^= 1
        var unsigned = valid
        unsigned.signature = nil
        var garbage = valid
        garbage.signature = "not base64"
        var trailing = valid
        trailing.signature = (valid.signature ?? "") + "AAAA"  // DER with bytes after the SEQUENCE
        var verifier = EntryVerifier(keys: [try Vectors.keyB()])
        for pin in [later, renamed, otherFingerprint, unsigned, garbage, trailing] {
            #expect(verifier.keyIndex(pin) == nil)
            #expect(verifier.keyIndex(valid) == 0)  // a failure leaves nothing behind for the next entry
        }
    }

    @Test("keysVerifyingEntries over several chunks names exactly the bad entries, in order")
    func manyEntries() throws {
        let keyB = try Vectors.keyB()
        let (expired, valid) = try Vectors.staticList()
        var bad = valid
        bad.expires += 1
        var pins = (0..<300).map { $0.isMultiple(of: 2) ? valid : expired }
        for index in [0, 63, 64, 200, 299] { pins[index] = bad }
        let keys = SignatureVerifier(keys: [try Vectors.keyA(), keyB]).keysVerifyingEntries(pins)
        #expect(keys.count == 300)
        #expect(keys.indices.filter { keys[$0] == nil } == [0, 63, 64, 200, 299])
        #expect(keys.allSatisfy { $0 == nil || $0 == keyB })
    }
}
