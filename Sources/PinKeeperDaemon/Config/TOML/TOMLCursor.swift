/// A position in a UTF-8 TOML document, with the lexical pieces every part of the grammar
/// shares: whitespace, newlines (LF or CRLF), comments, and error positions.
struct TOMLCursor {
    let bytes: [UInt8]
    var offset = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    var current: UInt8? { offset < bytes.count ? bytes[offset] : nil }
    var atEnd: Bool { offset >= bytes.count }

    func peek(_ ahead: Int) -> UInt8? {
        offset + ahead < bytes.count ? bytes[offset + ahead] : nil
    }

    func starts(with text: StaticString) -> Bool {
        let count = text.utf8CodeUnitCount
        guard offset + count <= bytes.count else { return false }
        return (0..<count).allSatisfy { bytes[offset + $0] == text.utf8Start[$0] }
    }

    func text(from start: Int) -> String { String(decoding: bytes[start..<offset], as: UTF8.self) }

    /// Control characters TOML refuses in comments and strings: all but tab (newlines are the
    /// caller's business).
    static func isControl(_ byte: UInt8) -> Bool { (byte < 0x20 && byte != 0x09) || byte == 0x7F }

    mutating func skipWhitespace() {
        while current == 0x20 || current == 0x09 { offset += 1 }
    }

    var atNewline: Bool { current == 0x0A || (current == 0x0D && peek(1) == 0x0A) }

    /// Consumes LF or CRLF.
    mutating func skipNewline() -> Bool {
        if current == 0x0A { offset += 1; return true }
        if current == 0x0D && peek(1) == 0x0A { offset += 2; return true }
        return false
    }

    /// A `#` comment up to (not including) the end of its line.
    mutating func skipComment() throws(TOMLError) {
        guard current == UInt8(ascii: "#") else { return }
        offset += 1
        while let byte = current, !atNewline {
            if Self.isControl(byte) { throw error("control character U+00\(hex(byte)) is not allowed in a comment") }
            offset += 1
        }
    }

    /// Whitespace, newlines and comments, which may separate the elements of an array.
    mutating func skipArraySpace() throws(TOMLError) {
        while true {
            skipWhitespace()
            if skipNewline() { continue }
            if current == UInt8(ascii: "#") { try skipComment(); continue }
            return
        }
    }

    func hex(_ byte: UInt8) -> String {
        let digits = Array("0123456789ABCDEF")
        return String([digits[Int(byte >> 4)], digits[Int(byte & 15)]])
    }

    /// The error at `position` (default: here), with its 1-based line and column in characters.
    func error(_ reason: String, at position: Int? = nil) -> TOMLError {
        let end = min(position ?? offset, bytes.count)
        // A byte order mark is skipped as no content, so it is no column either.
        let first = end >= 3 && bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
        var line = 1, column = 1
        for byte in bytes[first..<end] {
            if byte == 0x0A {
                line += 1
                column = 1
            } else if byte & 0xC0 != 0x80 {  // not a continuation byte: a new character
                column += 1
            }
        }
        return TOMLError(line: line, column: column, reason: reason)
    }

    /// The offset of the first byte that is not well-formed UTF-8 (overlong forms, surrogates
    /// and values above U+10FFFF included), or nil.
    static func firstInvalidUTF8(_ bytes: [UInt8]) -> Int? {
        var index = 0
        while index < bytes.count {
            let lead = bytes[index]
            let length: Int, lowest: UInt32
            var scalar: UInt32
            switch lead {
            case 0x00...0x7F: index += 1; continue
            case 0xC2...0xDF: length = 2; lowest = 0x80; scalar = UInt32(lead & 0x1F)
            case 0xE0...0xEF: length = 3; lowest = 0x800; scalar = UInt32(lead & 0x0F)
            case 0xF0...0xF4: length = 4; lowest = 0x10000; scalar = UInt32(lead & 0x07)
            default: return index
            }
            guard index + length <= bytes.count else { return index }
            for next in bytes[(index + 1)..<(index + length)] {
                guard next & 0xC0 == 0x80 else { return index }
                scalar = scalar << 6 | UInt32(next & 0x3F)
            }
            guard scalar >= lowest, scalar <= 0x10FFFF, !(0xD800...0xDFFF).contains(scalar) else { return index }
            index += length
        }
        return nil
    }
}
