/// A SHA-256 fingerprint as lists write it: standard base64 (`+`, `/`), padded, 44 characters.
enum Base64Digest {
    /// The digest `text` spells, or nil unless it is exactly 43 base64 characters and one `=`.
    /// As RFC 4648 decoders commonly do, the two unused low bits of the last character are
    /// ignored. Stricter than Foundation's `Data(base64Encoded:)`, which also accepts extra `=`
    /// and characters after the padding; Python's reader accepts exactly this form.
    /// Decoded into the digest's words straight from the text: no array per fingerprint.
    static func decode(_ text: UnsafeRawBufferPointer) -> SHA256Digest? {
        guard text.count == 44, text[43] == UInt8(ascii: "=") else { return nil }
        var digest: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
        let valid = sextets.withUnsafeBufferPointer { table in
            withUnsafeMutableBytes(of: &digest) { decode(text, table, into: $0) }
        }
        return valid ? withUnsafeBytes(of: &digest) { SHA256Digest($0) } : nil
    }

    /// The 43 characters' bits into `out`, three bytes per four characters; false when one is
    /// not in the alphabet (its mark, 0x100, may then leave garbage in `out`).
    private static func decode(
        _ text: UnsafeRawBufferPointer, _ table: UnsafeBufferPointer<UInt32>, into out: UnsafeMutableRawBufferPointer
    ) -> Bool {
        var marks: UInt32 = 0
        for group in 0..<10 {
            let a = table[Int(text[group * 4])], b = table[Int(text[group * 4 + 1])]
            let c = table[Int(text[group * 4 + 2])], d = table[Int(text[group * 4 + 3])]
            marks |= a | b | c | d
            let bits = a << 18 | b << 12 | c << 6 | d
            out[group * 3] = UInt8(truncatingIfNeeded: bits >> 16)
            out[group * 3 + 1] = UInt8(truncatingIfNeeded: bits >> 8)
            out[group * 3 + 2] = UInt8(truncatingIfNeeded: bits)
        }
        // The last three characters: 16 bits of the digest and two unused ones.
        let a = table[Int(text[40])], b = table[Int(text[41])], c = table[Int(text[42])]
        marks |= a | b | c
        let bits = a << 12 | b << 6 | c
        out[30] = UInt8(truncatingIfNeeded: bits >> 10)
        out[31] = UInt8(truncatingIfNeeded: bits >> 2)
        return marks & 0x100 == 0
    }

    /// Each byte's six bits, or 0x100 outside the alphabet: looked up, because branching on
    /// the ranges mispredicts on every other character of a random digest.
    private static let sextets: [UInt32] = (0..<256).map { (byte: Int) -> UInt32 in
        switch UInt8(byte) {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): UInt32(byte) - UInt32(UInt8(ascii: "A"))
        case UInt8(ascii: "a")...UInt8(ascii: "z"): UInt32(byte) - UInt32(UInt8(ascii: "a")) + 26
        case UInt8(ascii: "0")...UInt8(ascii: "9"): UInt32(byte) - UInt32(UInt8(ascii: "0")) + 52
        case UInt8(ascii: "+"): 62
        case UInt8(ascii: "/"): 63
        default: 0x100
        }
    }

    /// Appends the standard, padded base64 of the digest (as `Data.base64EncodedString()` writes it).
    static func encode(_ digest: SHA256Digest, into out: inout [UInt8]) {
        digest.withUnsafeBytes { encode($0, into: &out) }
    }

    /// Appends the standard, padded base64 of `bytes`.
    static func encode(_ bytes: UnsafeRawBufferPointer, into out: inout [UInt8]) {
        func character(_ sextet: UInt32) -> UInt8 {
            let value = UInt8(truncatingIfNeeded: sextet & 0x3F)
            switch value {
            case 0..<26: return UInt8(ascii: "A") + value
            case 26..<52: return UInt8(ascii: "a") + value - 26
            case 52..<62: return UInt8(ascii: "0") + value - 52
            case 62: return UInt8(ascii: "+")
            default: return UInt8(ascii: "/")
            }
        }
        var index = 0
        while index < bytes.count {
            let remaining = bytes.count - index
            var bits = UInt32(bytes[index]) << 16
            if remaining > 1 { bits |= UInt32(bytes[index + 1]) << 8 }
            if remaining > 2 { bits |= UInt32(bytes[index + 2]) }
            out.append(character(bits >> 18))
            out.append(character(bits >> 12))
            out.append(remaining > 1 ? character(bits >> 6) : UInt8(ascii: "="))
            out.append(remaining > 2 ? character(bits) : UInt8(ascii: "="))
            index += 3
        }
    }
}
