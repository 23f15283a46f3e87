import PinKeeper

/// The strict forms of `validate`'s values (Tests/Conformance/cases.json, `options`): one
/// spelling each, so that every reader's command line accepts and refuses the same text.
enum ValidateArguments {
    /// One to nine ASCII digits: no sign, `_`, space, hex, exponent or another script's digits.
    static func depth(_ text: String) -> Int? {
        let bytes = Array(text.utf8)
        guard (1...9).contains(bytes.count), bytes.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        return bytes.reduce(0) { $0 * 10 + Int($1 - 0x30) }
    }

    /// 32 bytes from 44 characters of padded standard base64, or from 64 hex digits, plain or as
    /// 32 colon-separated pairs (as `openssl x509 -fingerprint` prints them).
    static func digest(_ text: String) -> [UInt8]? {
        let bytes = Array(text.utf8)
        switch bytes.count {
        case 44: return base64(bytes)
        case 64: return hex(bytes[...])
        case 95:
            // Every third character a colon, and nothing else one.
            let colons = bytes.indices.filter { $0 % 3 == 2 }
            guard colons.allSatisfy({ bytes[$0] == UInt8(ascii: ":") }) else { return nil }
            return hex(bytes.enumerated().filter { $0.offset % 3 != 2 }.map(\.element)[...])
        default: return nil
        }
    }

    private static func base64(_ bytes: [UInt8]) -> [UInt8]? {
        guard bytes[43] == UInt8(ascii: "=") else { return nil }
        var values: [UInt32] = []
        for byte in bytes[..<43] {
            guard let value = base64Value(byte) else { return nil }
            values.append(value)
        }
        values.append(0)  // the padding stands for a zero sextet
        var digest: [UInt8] = []
        for quad in stride(from: 0, to: 44, by: 4) {
            let word = values[quad] << 18 | values[quad + 1] << 12 | values[quad + 2] << 6 | values[quad + 3]
            digest += [UInt8(word >> 16), UInt8(word >> 8 & 0xFF), UInt8(word & 0xFF)]
        }
        return Array(digest.prefix(32))
    }

    private static func base64Value(_ byte: UInt8) -> UInt32? {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): UInt32(byte - UInt8(ascii: "A"))
        case UInt8(ascii: "a")...UInt8(ascii: "z"): UInt32(byte - UInt8(ascii: "a")) + 26
        case UInt8(ascii: "0")...UInt8(ascii: "9"): UInt32(byte - UInt8(ascii: "0")) + 52
        case UInt8(ascii: "+"): 62
        case UInt8(ascii: "/"): 63
        default: nil
        }
    }

    private static func hex(_ digits: ArraySlice<UInt8>) -> [UInt8]? {
        guard digits.count == 64 else { return nil }
        var digest: [UInt8] = []
        var index = digits.startIndex
        while index < digits.endIndex {
            guard let high = HexDigit.value(digits[index]), let low = HexDigit.value(digits[index + 1]) else { return nil }
            digest.append(high << 4 | low)
            index += 2
        }
        return digest
    }

}
