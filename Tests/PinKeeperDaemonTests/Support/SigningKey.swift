import CLibcrypto
import Foundation
import PinKeeper
@testable import PinKeeperDaemon

/// A P-256 list-signing key made for the test run, signing static entries in this process with
/// libcrypto: generated tests sign thousands of entries, one `openssl` process apiece would take
/// minutes. Verification stays the daemon's (`SignatureVerifier`), so a signing bug cannot hide
/// a verification bug: an entry this key signs must verify there, or the test fails.
final class SigningKey: @unchecked Sendable {  // the EVP_PKEY is only read once made
    private let key: OpaquePointer
    let publicKey: PublicKey

    init() throws {
        guard let context = EVP_PKEY_CTX_new_id(EVP_PKEY_EC, nil) else { throw VectorError("EVP_PKEY_CTX_new_id failed") }
        defer { EVP_PKEY_CTX_free(context) }
        var made: OpaquePointer?
        guard EVP_PKEY_keygen_init(context) == 1, EVP_PKEY_CTX_set_ec_paramgen_curve_nid(context, NID_X9_62_prime256v1) == 1,
            EVP_PKEY_keygen(context, &made) == 1, let made
        else { throw VectorError("no P-256 key could be generated") }
        key = made
        // The 65-byte uncompressed point, the form a store's `public_keys` holds.
        var point: UnsafeMutablePointer<UInt8>?
        let length = EVP_PKEY_get1_encoded_public_key(made, &point)
        guard length == 65, let point else { throw VectorError("the generated key has no 65-byte public point") }
        defer { CRYPTO_free(point, nil, 0) }
        publicKey = try PublicKey(base64: Data(bytes: point, count: length).base64EncodedString())
    }

    deinit { EVP_PKEY_free(key) }

    /// The base64 DER signature over `message` (SHA-256, ECDSA).
    func sign(_ message: String) -> String {
        let bytes = Array(message.utf8)
        guard let context = EVP_MD_CTX_new() else { return "" }
        defer { EVP_MD_CTX_free(context) }
        var length = 0
        guard EVP_DigestSignInit(context, nil, EVP_sha256(), nil, key) == 1,
            EVP_DigestSign(context, nil, &length, bytes, bytes.count) == 1
        else { return "" }
        var signature = [UInt8](repeating: 0, count: length)
        guard EVP_DigestSign(context, &signature, &length, bytes, bytes.count) == 1 else { return "" }
        return Data(signature.prefix(length)).base64EncodedString()
    }

    /// A static entry's signature: over `name&base64(fingerprint)&expires` (`SignatureVerifier.signedString`).
    func sign(name: String, fingerprint: [UInt8], expires: Int64) -> String {
        sign(SignatureVerifier.signedString(for: Pin(name: name, fingerprint: fingerprint, expires: expires)))
    }
}
