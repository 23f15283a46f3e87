import CLibcrypto

/// Randomness for splay and jitter (not for secrets); injected so tests are deterministic.
public protocol RandomSource: Sendable {
    /// A uniformly distributed value in `0...upper` (upper >= 0).
    func uniform(upTo upper: Int64) -> Int64
}

public struct SystemRandom: RandomSource {
    public init() {}
    public func uniform(upTo upper: Int64) -> Int64 { upper <= 0 ? 0 : Int64.random(in: 0...upper) }
}

/// Bytes from OpenSSL's CSPRNG, for the challenge header.
enum SecureRandom {
    static func bytes(_ count: Int) -> [UInt8]? {
        var out = [UInt8](repeating: 0, count: count)
        return RAND_bytes(&out, Int32(count)) == 1 ? out : nil
    }
}
