import CLibcrypto
import FoundationEssentials
import PinKeeper

/// Verifies static entries one after another with OpenSSL contexts set up once: a SHA-256
/// digest context and, per key, an `EVP_PKEY_verify` context. `PublicKey.isValidSignature`
/// sets both up for every call, which on a 100,000-entry list costs about a fifth of the
/// verification itself and takes a lock shared by every thread. One per thread, never shared.
struct EntryVerifier: ~Copyable {
    private let sha256: OpaquePointer?
    private let digestContext: OpaquePointer?
    /// Index-aligned with the keys; nil where OpenSSL could not set one up (that key verifies nothing).
    private let contexts: [OpaquePointer?]
    /// The signed string `name&base64(fingerprint)&expires`, rebuilt in place for each entry.
    private(set) var message: [UInt8] = []

    init(keys: [PublicKey]) {
        sha256 = EVP_MD_fetch(nil, "SHA256", nil)
        digestContext = EVP_MD_CTX_new()
        contexts = keys.map { key in
            guard let context = key.evpKey.flatMap({ EVP_PKEY_CTX_new($0, nil) }) else { return nil }
            guard EVP_PKEY_verify_init(context) == 1 else {
                EVP_PKEY_CTX_free(context)
                OpenSSLError.clear()
                return nil
            }
            return context
        }
        message.reserveCapacity(256)
    }

    deinit {
        for context in contexts { EVP_PKEY_CTX_free(context) }
        EVP_MD_CTX_free(digestContext)
        EVP_MD_free(sha256)
    }

    /// The index of the first key under which `pin`'s signature verifies, as
    /// `SignatureVerifier.keyVerifyingEntry` answers it.
    mutating func keyIndex(_ pin: Pin) -> Int? {
        guard let text = pin.signature else { return nil }
        return RawBytes.withUTF8(pin.name) { name in
            pin.digest.withUnsafeBytes { fingerprint in
                keyIndex(name: name, fingerprint: fingerprint, expires: pin.expires, signature: text)
            }
        }
    }

    /// The same for an entry's fields in place; `signature` as served (base64).
    mutating func keyIndex(
        name: UnsafeRawBufferPointer, fingerprint: UnsafeRawBufferPointer, expires: Int64, signature text: String
    ) -> Int? {
        guard let signature = Data(base64Encoded: text) else { return nil }
        writeSignedString(name: name, fingerprint: fingerprint, expires: expires)
        var digest = [UInt8](repeating: 0, count: 32)
        guard let sha256, let digestContext,
            message.withUnsafeBufferPointer({ bytes in
                digest.withUnsafeMutableBufferPointer { out in
                    EVP_DigestInit_ex(digestContext, sha256, nil) == 1
                        && EVP_DigestUpdate(digestContext, bytes.baseAddress, bytes.count) == 1
                        && EVP_DigestFinal_ex(digestContext, out.baseAddress, nil) == 1
                }
            })
        else {
            OpenSSLError.clear()
            return nil
        }
        return signature.withUnsafeBytes { sig in
            contexts.firstIndex { context in
                guard let context else { return false }
                let result = EVP_PKEY_verify(
                    context, sig.baseAddress?.assumingMemoryBound(to: UInt8.self), sig.count, digest, digest.count)
                // 0 = wrong signature, < 0 = malformed DER: both mean "not valid"; leave no error queued.
                if result != 1 { OpenSSLError.clear() }
                return result == 1
            }
        }
    }

    /// `SignatureVerifier.signedString(for:)`, byte for byte, without a String per entry.
    mutating func writeSignedString(_ pin: Pin) {
        RawBytes.withUTF8(pin.name) { name in
            pin.digest.withUnsafeBytes { writeSignedString(name: name, fingerprint: $0, expires: pin.expires) }
        }
    }

    private mutating func writeSignedString(name: UnsafeRawBufferPointer, fingerprint: UnsafeRawBufferPointer, expires: Int64) {
        message.removeAll(keepingCapacity: true)
        message.append(contentsOf: name)
        message.append(0x26)
        let start = message.count
        let encoded = (fingerprint.count + 2) / 3 * 4
        message.append(contentsOf: repeatElement(0, count: encoded + 1))  // EVP_EncodeBlock ends with a NUL
        let written = message.withUnsafeMutableBufferPointer { out in
            EVP_EncodeBlock(
                out.baseAddress! + start, fingerprint.baseAddress?.assumingMemoryBound(to: UInt8.self), Int32(fingerprint.count))
        }
        message.removeLast(encoded + 1 - Int(written))
        message.append(0x26)
        message.append(contentsOf: String(expires).utf8)
    }
}
