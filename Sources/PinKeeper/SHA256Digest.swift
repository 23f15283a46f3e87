/// A SHA-256 digest held inline as four big-endian 64-bit words: a pin carries its fingerprint
/// without a heap buffer (nothing to allocate when a list is read, no reference to count when a
/// pin is copied), and two digests compare as integers in the order of their bytes.
public struct SHA256Digest: Hashable, Comparable, Sendable {
    private var high: UInt64, upper: UInt64, lower: UInt64, low: UInt64

    public static let byteCount = 32

    /// nil unless `bytes` holds exactly 32 bytes.
    public init?(_ bytes: [UInt8]) {
        guard let digest = bytes.withUnsafeBytes({ Self($0) }) else { return nil }
        self = digest
    }

    /// nil unless `bytes` holds exactly 32 bytes.
    public init?(_ bytes: UnsafeRawBufferPointer) {
        guard bytes.count == Self.byteCount else { return nil }
        func word(_ offset: Int) -> UInt64 { UInt64(bigEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self)) }
        high = word(0)
        upper = word(8)
        lower = word(16)
        low = word(24)
    }

    /// The 32 bytes.
    public var bytes: [UInt8] {
        [UInt8](unsafeUninitializedCapacity: Self.byteCount) { buffer, count in
            withUnsafeBytes { UnsafeMutableRawBufferPointer(buffer).copyMemory(from: $0) }
            count = Self.byteCount
        }
    }

    /// Lets `body` see the 32 bytes in order, without an array (`bytes` allocates one).
    public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        var words = (high.bigEndian, upper.bigEndian, lower.bigEndian, low.bigEndian)
        return try Swift.withUnsafeBytes(of: &words, body)
    }

    /// Byte order, as `[UInt8].lexicographicallyPrecedes` would compare the two.
    public static func < (a: SHA256Digest, b: SHA256Digest) -> Bool {
        (a.high, a.upper, a.lower, a.low) < (b.high, b.upper, b.lower, b.low)
    }
}
