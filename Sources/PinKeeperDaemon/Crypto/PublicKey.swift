import CLibcrypto
import Foundation
import PinKeeper

/// A store's signing key: a P-256 public key given as base64 of its 65-byte uncompressed point.
public final class PublicKey: Sendable {
    public let base64: String
    /// A short, stable name for the key, recorded on every pin it verified: the first 8 bytes of
    /// the SHA-256 of the 65-byte point, in lower-case hex (`base64 -d | sha256sum | cut -c1-16`).
    public let id: String
    // EVP_PKEY is never mutated after creation, and OpenSSL 3 allows concurrent verification with one key.
    nonisolated(unsafe) private let key: OpaquePointer

    public struct Invalid: Error { public var reason: String }

    /// DER SubjectPublicKeyInfo header for an uncompressed P-256 point (id-ecPublicKey, prime256v1);
    /// the point follows it, so d2i_PUBKEY can build the key and check the point is on the curve.
    private static let spkiPrefix: [UInt8] = [
        0x30, 0x59, 0x30, 0x13, 0x06, 0x07, 0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x02, 0x01,
        0x06, 0x08, 0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x03, 0x01, 0x07, 0x03, 0x42, 0x00,
    ]

    public init(base64: String) throws(Invalid) {
        guard let point = Data(base64Encoded: base64) else {
            throw Invalid(reason: "is not valid base64")
        }
        guard point.count == 65, point.first == 0x04 else {
            throw Invalid(reason: "must be the 65-byte uncompressed P-256 point (0x04||X||Y), got \(point.count) bytes"
                + (point.count == 91 ? " (this looks like SPKI DER; export the raw point instead)" : ""))
        }
        let der = Self.spkiPrefix + Array(point)
        let parsed: OpaquePointer? = der.withUnsafeBufferPointer { buffer in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            return d2i_PUBKEY(nil, &cursor, buffer.count)
        }
        guard let parsed else {
            let detail = OpenSSLError.drain()
            throw Invalid(reason: "is not a point on the P-256 curve (\(detail))")
        }
        self.base64 = base64
        self.id = SHA256.digest(Array(point)).prefix(8).map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
        self.key = parsed
    }

    deinit { EVP_PKEY_free(key) }

    /// ECDSA P-256 with SHA-256 over `message`; `signature` is DER `SEQUENCE{r, s}`.
    public func isValidSignature(_ signature: [UInt8], for message: UnsafeRawBufferPointer) -> Bool {
        guard let context = EVP_MD_CTX_new() else { return false }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestVerifyInit(context, nil, EVP_sha256(), nil, key) == 1 else {
            OpenSSLError.clear()
            return false
        }
        let result = signature.withUnsafeBufferPointer { sig in
            EVP_DigestVerify(context, sig.baseAddress, sig.count,
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
        var reasons: [String] = []
        while case let code = ERR_get_error(), code != 0 {
            var buffer = [UInt8](repeating: 0, count: 256)
            buffer.withUnsafeMutableBufferPointer { raw in
                raw.withMemoryRebound(to: CChar.self) { ERR_error_string_n(code, $0.baseAddress, $0.count) }
            }
            reasons.append(String(decoding: buffer.prefix { $0 != 0 }, as: UTF8.self))
        }
        return reasons.isEmpty ? "no OpenSSL detail" : reasons.joined(separator: "; ")
    }

    static func clear() { ERR_clear_error() }
}
