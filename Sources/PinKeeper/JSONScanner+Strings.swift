import Glibc

/// Strings: scanned in place, UTF-8 and escapes checked, unescaped only when asked.
extension JSONScanner {

    /// Checks the string whose opening quote is at `position` and moves past its closing quote.
    /// Returns the range of its content and whether it holds escapes.
    mutating func scanString() throws(PinListError) -> (start: Int, end: Int, escaped: Bool) {
        position += 1
        let start = position
        var escaped = false
        while position < bytes.count {
            skipPlainASCII()
            guard position < bytes.count else { break }
            let byte = bytes[position]
            if byte >= 0x20 && byte < 0x80 && byte != UInt8(ascii: "\"") && byte != UInt8(ascii: "\\") {
                position += 1
                continue
            }
            switch byte {
            case UInt8(ascii: "\""):
                position += 1
                return (start, position - 1, escaped)
            case UInt8(ascii: "\\"):
                escaped = true
                try scanEscape()
            case ..<0x20:
                throw syntaxError("a control character in a string")
            default:
                try scanUTF8Sequence()
            }
        }
        throw syntaxError("unexpected end inside a string")
    }

    /// Moves past printable ASCII other than `"` and `\`, eight bytes at a time: most of a
    /// list's bytes are inside names, fingerprints and signatures.
    mutating func skipPlainASCII() {
        position = plainASCIIEnd(from: position)
    }

    /// The first byte from `start` on that is not printable ASCII other than `"` and `\`, found
    /// eight bytes at a time; where fewer than eight remain, the first of those.
    func plainASCIIEnd(from start: Int) -> Int {
        let ones: UInt64 = 0x0101_0101_0101_0101, highs: UInt64 = 0x8080_8080_8080_8080
        var index = start
        while bytes.count - index >= 8 {
            let word = UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: index, as: UInt64.self))
            // A byte's high bit is set where it is < 0x20, `"`, `\` or not ASCII (the usual
            // "has a zero byte" test on word - 0x20.., word ^ 0x22.. and word ^ 0x5C..).
            let control = (word &- ones &* 0x20) & ~word
            let quote = word ^ (ones &* 0x22), backslash = word ^ (ones &* 0x5C)
            let special = (control | ((quote &- ones) & ~quote) | ((backslash &- ones) & ~backslash) | word) & highs
            if special != 0 { return index + special.trailingZeroBitCount / 8 }
            index += 8
        }
        return index
    }

    mutating func scanEscape() throws(PinListError) {
        let start = position
        position += 1
        guard position < bytes.count else { throw syntaxError("unexpected end inside a string") }
        switch bytes[position] {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"),
            UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
            position += 1
        case UInt8(ascii: "u"):
            position += 1
            let unit = try hexUnit(start)
            if unit & 0xFC00 == 0xDC00 { throw syntaxError("a lone surrogate escape", at: start) }
            if unit & 0xFC00 == 0xD800 {
                guard bytes.count - position >= 6, bytes[position] == UInt8(ascii: "\\"), bytes[position + 1] == UInt8(ascii: "u") else {
                    throw syntaxError("a lone surrogate escape", at: start)
                }
                position += 2
                guard try hexUnit(start) & 0xFC00 == 0xDC00 else { throw syntaxError("a lone surrogate escape", at: start) }
            }
        default:
            throw syntaxError("an invalid escape", at: start)
        }
    }

    /// Four hex digits at `position`.
    mutating func hexUnit(_ escapeStart: Int) throws(PinListError) -> UInt16 {
        guard bytes.count - position >= 4 else { throw syntaxError("an invalid escape", at: escapeStart) }
        var unit: UInt16 = 0
        for _ in 0..<4 {
            guard let digit = HexDigit.value(bytes[position]) else { throw syntaxError("an invalid escape", at: escapeStart) }
            unit = unit << 4 | UInt16(digit)
            position += 1
        }
        return unit
    }

    /// One well-formed multi-byte UTF-8 sequence (no overlong form, no surrogate, at most U+10FFFF).
    mutating func scanUTF8Sequence() throws(PinListError) {
        let lead = bytes[position]
        let continuations: Int
        var low: UInt8 = 0x80, high: UInt8 = 0xBF  // the range of the first continuation byte
        switch lead {
        case 0xC2...0xDF: continuations = 1
        case 0xE0: continuations = 2; low = 0xA0
        case 0xED: continuations = 2; high = 0x9F
        case 0xE1...0xEF: continuations = 2
        case 0xF0: continuations = 3; low = 0x90
        case 0xF4: continuations = 3; high = 0x8F
        case 0xF1...0xF3: continuations = 3
        default: throw syntaxError("invalid UTF-8")
        }
        guard bytes.count - position > continuations else { throw syntaxError("invalid UTF-8") }
        let first = bytes[position + 1]
        guard first >= low && first <= high else { throw syntaxError("invalid UTF-8") }
        for offset in stride(from: 2, through: continuations, by: 1) {
            guard bytes[position + offset] & 0xC0 == 0x80 else { throw syntaxError("invalid UTF-8") }
        }
        position += continuations + 1
    }

    /// Writes the unescaped content of a string already checked by `scanString` to `scratch`.
    mutating func unescape(_ range: Range<Int>) {
        scratch.removeAll(keepingCapacity: true)
        var index = range.lowerBound
        func hex(_ at: Int) -> UInt32 {
            var unit: UInt32 = 0
            for offset in 0..<4 { unit = unit << 4 | UInt32(HexDigit.value(bytes[at + offset])!) }
            return unit
        }
        while index < range.upperBound {
            let byte = bytes[index]
            guard byte == UInt8(ascii: "\\") else {
                scratch.append(byte)
                index += 1
                continue
            }
            let code = bytes[index + 1]
            index += 2
            switch code {
            case UInt8(ascii: "b"): scratch.append(0x08)
            case UInt8(ascii: "f"): scratch.append(0x0C)
            case UInt8(ascii: "n"): scratch.append(0x0A)
            case UInt8(ascii: "r"): scratch.append(0x0D)
            case UInt8(ascii: "t"): scratch.append(0x09)
            case UInt8(ascii: "u"):
                var scalar = hex(index)
                index += 4
                if scalar & 0xFC00 == 0xD800 {
                    scalar = 0x10000 + (scalar - 0xD800) << 10 + (hex(index + 2) - 0xDC00)
                    index += 6
                }
                scratch.append(contentsOf: UTF8.encode(Unicode.Scalar(scalar)!)!)
            default: scratch.append(code)  // " \ /
            }
        }
    }
}
