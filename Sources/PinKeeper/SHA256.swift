import CLibcrypto

/// SHA-256 through libcrypto: the fingerprint of a DER certificate.
public enum SHA256 {
    public static func digest(_ bytes: [UInt8]) -> [UInt8] { bytes.withUnsafeBytes { digest($0) } }

    /// The same over bytes in place (a 22 MB response body is not copied into an array first).
    public static func digest(_ input: UnsafeRawBufferPointer) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        let ok = out.withUnsafeMutableBytes { output in
            EVP_Digest(
                input.baseAddress, input.count, output.baseAddress?.assumingMemoryBound(to: UInt8.self),
                &length, EVP_sha256(), nil)
        }
        // EVP_Digest with SHA-256 fails only when allocation fails; an all-zero digest never matches a pin.
        return ok == 1 ? out : []
    }
}
