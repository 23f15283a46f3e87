import PinKeeper
/// The four string forms: basic, literal, and their multi-line variants.
extension TOMLCursor {
    /// A string value or quoted key starting at a quote. Keys may not be multi-line.
    mutating func string(allowMultiline: Bool = true) throws(TOMLError) -> String {
        let basic = current == UInt8(ascii: "\"")
        if allowMultiline && (starts(with: "\"\"\"") || starts(with: "'''")) {
            return try multilineString(basic: basic)
        }
        let start = offset
        offset += 1
        var result: [UInt8] = []
        while true {
            guard let byte = current, !atNewline else {
                throw error("this string has no closing quote on its line", at: start)
            }
            if byte == (basic ? UInt8(ascii: "\"") : UInt8(ascii: "'")) {
                offset += 1
                return String(decoding: result, as: UTF8.self)
            }
            if basic && byte == UInt8(ascii: "\\") {
                try escape(into: &result)
                continue
            }
            if Self.isControl(byte) { throw error("control character U+00\(hex(byte)) must be escaped in a string") }
            result.append(byte)
            offset += 1
        }
    }

    /// `"""…"""` or `'''…'''`. A newline right after the opening quotes is dropped; CRLF
    /// becomes LF; one or two quotes may stand just before the closing three.
    private mutating func multilineString(basic: Bool) throws(TOMLError) -> String {
        let start = offset
        let quote = basic ? UInt8(ascii: "\"") : UInt8(ascii: "'")
        offset += 3
        _ = skipNewline()
        var result: [UInt8] = []
        while true {
            guard let byte = current else { throw error("this multi-line string is never closed", at: start) }
            if byte == quote && peek(1) == quote && peek(2) == quote {
                offset += 3
                for _ in 0..<2 where current == quote {
                    result.append(quote)
                    offset += 1
                }
                return String(decoding: result, as: UTF8.self)
            }
            if skipNewline() {
                result.append(0x0A)
                continue
            }
            if basic && byte == UInt8(ascii: "\\") {
                if try !skipLineEndingBackslash() { try escape(into: &result) }
                continue
            }
            if Self.isControl(byte) { throw error("control character U+00\(hex(byte)) must be escaped in a string") }
            result.append(byte)
            offset += 1
        }
    }

    /// A backslash that ends its line (only whitespace after it) removes the newline and all
    /// whitespace and newlines that follow.
    private mutating func skipLineEndingBackslash() throws(TOMLError) -> Bool {
        var probe = self
        probe.offset += 1
        probe.skipWhitespace()
        guard probe.atNewline else {
            if probe.offset > offset + 1 { throw probe.error("only a newline may follow whitespace after a backslash") }
            return false
        }
        while probe.skipNewline() { probe.skipWhitespace() }
        offset = probe.offset
        return true
    }

    /// One escape sequence after a backslash, appended as UTF-8.
    private mutating func escape(into result: inout [UInt8]) throws(TOMLError) {
        let start = offset
        offset += 1
        guard let letter = current else { throw error("a backslash ends the document") }
        offset += 1
        switch letter {
        case UInt8(ascii: "b"): result.append(0x08)
        case UInt8(ascii: "t"): result.append(0x09)
        case UInt8(ascii: "n"): result.append(0x0A)
        case UInt8(ascii: "f"): result.append(0x0C)
        case UInt8(ascii: "r"): result.append(0x0D)
        case UInt8(ascii: "\""): result.append(0x22)
        case UInt8(ascii: "\\"): result.append(0x5C)
        case UInt8(ascii: "u"), UInt8(ascii: "U"):
            let count = letter == UInt8(ascii: "u") ? 4 : 8
            var value: UInt32 = 0
            for _ in 0..<count {
                guard let byte = current, let digit = HexDigit.value(byte) else {
                    throw error("\\\(letter == UInt8(ascii: "u") ? "u" : "U") needs exactly \(count) hexadecimal digits", at: start)
                }
                value = value << 4 | UInt32(digit)
                offset += 1
            }
            guard let scalar = Unicode.Scalar(value) else {
                throw error("escape \(text(from: start)) is not a Unicode scalar value (a surrogate or above U+10FFFF)", at: start)
            }
            result.append(contentsOf: String(Character(scalar)).utf8)
        default:
            offset = start
            throw error("invalid escape sequence; the escapes are \\b \\t \\n \\f \\r \\\" \\\\ \\uXXXX \\UXXXXXXXX")
        }
    }

}
