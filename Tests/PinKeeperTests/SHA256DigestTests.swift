import Foundation
import PinKeeper
import TestSupport
import Testing

/// A pin's fingerprint is held as four words: its bytes, base64 and order must be those of the
/// 32 bytes it was made from.
@Suite("SHA256Digest")
struct SHA256DigestTests {
    @Test("bytes, base64 and order are the 32 bytes' own; other lengths are not a digest")
    func bytesBase64AndOrder() throws {
        var random = SplitMix64(seed: 0xD16E57)
        let samples = (0..<200).map { _ in (0..<32).map { _ in UInt8(truncatingIfNeeded: random.next() % 4 * 0x55) } }
        for (a, b) in zip(samples, samples.reversed()) {
            let digest = try #require(SHA256Digest(a))
            #expect(digest.bytes == a)
            #expect(digest.withUnsafeBytes { Array($0) } == a)
            #expect(Pin(name: "n", fingerprint: a, expires: 0).fingerprintBase64 == Data(a).base64EncodedString())
            #expect((digest < SHA256Digest(b)!) == a.lexicographicallyPrecedes(b))
            #expect((digest == SHA256Digest(b)!) == (a == b))
        }
        #expect(SHA256Digest([UInt8](repeating: 1, count: 31)) == nil && SHA256Digest([]) == nil)
    }
}
