import CLibcrypto
import FoundationEssentials
import PinKeeper
import Synchronization

/// A store's signing key: a P-256 public key given as base64 of its 65-byte uncompressed point.
///
/// Checked in full when the configuration is read (base64, length, on the curve), but turned into
/// an OpenSSL key and hashed into its `id` only when an update first needs them: OpenSSL's decoder
/// and provider set-up cost more than the rest of a `validate` or `status` process, which never
/// verify a signature.
public final class PublicKey: Sendable, Equatable {
    public let base64: String
    private let point: [UInt8]
    private let decoded = Mutex<Decoded?>(nil)

    /// The EVP_PKEY and the id, made together on first use.
    private struct Decoded: @unchecked Sendable {  // never mutated; OpenSSL 3 verifies with one key from many threads
        let key: OpaquePointer?
        let id: String
    }

    public struct Invalid: Error { public var reason: String }

    /// DER SubjectPublicKeyInfo header for an uncompressed P-256 point (id-ecPublicKey, prime256v1);
    /// the point follows it, so d2i_PUBKEY can build the key.
    private static let spkiPrefix: [UInt8] = [
        0x30, 0x59, 0x30, 0x13, 0x06, 0x07, 0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x02, 0x01,
        0x06, 0x08, 0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x03, 0x01, 0x07, 0x03, 0x42, 0x00,
    ]

    public init(base64: String) throws(Invalid) {
        guard let point = Data(base64Encoded: base64) else {
            throw Invalid(reason: "is not valid base64")
        }
        guard point.count == 65, point.first == 0x04 else {
            throw Invalid(
                reason: "must be the 65-byte uncompressed P-256 point (0x04||X||Y), got \(point.count) bytes"
                    + (point.count == 91 ? " (this looks like SPKI DER; export the raw point instead)" : ""))
        }
        self.base64 = base64
        self.point = Array(point)
        try Self.checkOnCurve(self.point)
    }

    deinit {
        if let key = decoded.withLock({ $0?.key }) { EVP_PKEY_free(key) }
    }

    /// One point, one key: however its base64 was written (a reload that only re-encodes a key fetches nothing).
    public static func == (lhs: PublicKey, rhs: PublicKey) -> Bool { lhs.point == rhs.point }

    /// A short, stable name for the key, recorded on every pin it verified: the first 8 bytes of
    /// the SHA-256 of the 65-byte point, in lower-case hex (`base64 -d | sha256sum | cut -c1-16`).
    public var id: String { decodedOnce().id }

    /// The OpenSSL key (decoded on first use); nil only if OpenSSL could not allocate it.
    var evpKey: OpaquePointer? { decodedOnce().key }

    /// Whether the key was decoded yet (for tests).
    var isDecoded: Bool { decoded.withLock { $0 != nil } }

    /// The curve check alone, with the low-level EC functions: they need no OpenSSL provider, so
    /// rejecting a bad key costs a fraction of decoding a good one.
    private static func checkOnCurve(_ point: [UInt8]) throws(Invalid) {
        guard let group = EC_GROUP_new_by_curve_name(NID_X9_62_prime256v1) else {
            throw Invalid(reason: "cannot be checked: OpenSSL has no P-256 (\(OpenSSLError.drain()))")
        }
        defer { EC_GROUP_free(group) }
        guard let candidate = EC_POINT_new(group) else {
            throw Invalid(reason: "cannot be checked: \(OpenSSLError.drain())")
        }
        defer { EC_POINT_free(candidate) }
        guard EC_POINT_oct2point(group, candidate, point, point.count, nil) == 1 else {
            throw Invalid(reason: "is not a point on the P-256 curve (\(OpenSSLError.drain()))")
        }
    }

    private func decodedOnce() -> Decoded {
        decoded.withLock { state in
            if let state { return state }
            let der = Self.spkiPrefix + point
            let key: OpaquePointer? = der.withUnsafeBufferPointer { buffer in
                var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
                return d2i_PUBKEY(nil, &cursor, buffer.count)
            }
            // The point passed the curve check, so only a failed allocation ends here: no key
            // then verifies anything (isValidSignature answers false), which fails closed.
            if key == nil { OpenSSLError.clear() }
            let id = lowerHex(SHA256.digest(point).prefix(8))
            let made = Decoded(key: key, id: id)
            state = made
            return made
        }
    }

    /// ECDSA P-256 with SHA-256 over `message`; `signature` is DER `SEQUENCE{r, s}`.
    public func isValidSignature(_ signature: [UInt8], for message: UnsafeRawBufferPointer) -> Bool {
        guard let key = decodedOnce().key, let context = EVP_MD_CTX_new() else { return false }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestVerifyInit(context, nil, EVP_sha256(), nil, key) == 1 else {
            OpenSSLError.clear()
            return false
        }
        let result = signature.withUnsafeBufferPointer { sig in
            EVP_DigestVerify(
                context, sig.baseAddress, sig.count,
                message.baseAddress?.assumingMemoryBound(to: UInt8.self), message.count)
        }
        // 0 = wrong signature, < 0 = malformed DER: both mean "not valid"; don't leave errors queued.
        if result != 1 { OpenSSLError.clear() }
        return result == 1
    }
}

/// The OpenSSL error queue, turned into text for messages.
enum OpenSSLError {
    static func drain() -> String {
        let reasons = OpenSSLErrorQueue.drain()
        return reasons.isEmpty ? "no OpenSSL detail" : reasons.joined(separator: "; ")
    }

    static func clear() { ERR_clear_error() }
}
