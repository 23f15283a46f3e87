import CLibcrypto

/// SHA-256 over bytes that come in parts (`SHA256.digest` takes them all at once).
struct SHA256Stream: ~Copyable {
    private let context = EVP_MD_CTX_new()
    private var failed = false

    init() {
        failed = EVP_DigestInit_ex(context, EVP_sha256(), nil) != 1
    }

    deinit { EVP_MD_CTX_free(context) }

    mutating func update(_ bytes: UnsafeRawBufferPointer) {
        guard !failed, bytes.count > 0 else { return }
        failed = EVP_DigestUpdate(context, bytes.baseAddress, bytes.count) != 1
    }

    /// The digest; empty if libcrypto failed (it does only when allocation fails), which no
    /// digest it computes equals.
    consuming func finish() -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        let ok = !failed && out.withUnsafeMutableBufferPointer { EVP_DigestFinal_ex(context, $0.baseAddress, &length) } == 1
        return ok ? out : []
    }
}
