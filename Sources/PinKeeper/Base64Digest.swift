/// A SHA-256 fingerprint as lists write it: standard base64 (`+`, `/`), padded, 44 characters.
enum Base64Digest {
    /// The 32 bytes of `text`, or nil unless it is exactly 43 base64 characters and one `=`.
    /// As RFC 4648 decoders commonly do, the two unused low bits of the last character are
    /// ignored. Stricter than Foundation's `Data(base64Encoded:)`, which also accepts extra `=`
    /// and characters after the padding; Python's reader accepts exactly this form.
    static func decode(_ text: UnsafeRawBufferPointer) -> [UInt8]? {
        guard text.count == 44, text[43] == UInt8(ascii: "=") else { return nil }
        // 0x100 marks a byte outside the alphabet; the marks of all 43 are or-ed together.
        func sextet(_ index: Int) -> UInt32 {
            let byte = text[index]
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): return UInt32(byte &- UInt8(ascii: "A"))
            case UInt8(ascii: "a")...UInt8(ascii: "z"): return UInt32(byte &- UInt8(ascii: "a") &+ 26)
            case UInt8(ascii: "0")...UInt8(ascii: "9"): return UInt32(byte &- UInt8(ascii: "0") &+ 52)
            case UInt8(ascii: "+"): return 62
            case UInt8(ascii: "/"): return 63
            default: return 0x100
            }
        }
        var marks: UInt32 = 0
        func group(_ start: Int, _ count: Int) -> UInt32 {
            var bits: UInt32 = 0
            for index in start..<start + count {
                let value = sextet(index)
                marks |= value
                bits = bits << 6 | (value & 0x3F)
            }
            return bits
        }
        let digest = [UInt8](unsafeUninitializedCapacity: 32) { out, count in
            for index in 0..<10 {
                let bits = group(index * 4, 4)
                out[index * 3] = UInt8(truncatingIfNeeded: bits >> 16)
                out[index * 3 + 1] = UInt8(truncatingIfNeeded: bits >> 8)
                out[index * 3 + 2] = UInt8(truncatingIfNeeded: bits)
            }
            let last = group(40, 3)
            out[30] = UInt8(truncatingIfNeeded: last >> 10)
            out[31] = UInt8(truncatingIfNeeded: last >> 2)
            count = 32
        }
        return marks & 0x100 == 0 ? digest : nil
    }

    /// Appends the standard, padded base64 of `bytes` (as `Data.base64EncodedString()` writes it).
    static func encode(_ bytes: [UInt8], into out: inout [UInt8]) {
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
