/// Reads a TOML 1.0 document: statements (key/value pairs, `[table]` and `[[array]]` headers,
/// comments), keys and values. Lexical pieces live in `TOMLCursor`'s extensions, table rules
/// in `TOMLTableNode`.
struct TOMLParser {
    /// Tables and arrays nest at most this deep, counted from the root over header parts,
    /// dotted key parts, arrays of tables, arrays and inline tables alike: the reader recurses
    /// (parsing values, finishing tables, releasing them), and a hostile file must not
    /// exhaust a thread's stack.
    static let deepestNesting = 100
    static let tooDeep = "tables and arrays nest more than \(deepestNesting) levels deep"

    private var cursor: TOMLCursor
    private let root = TOMLTableNode(.header, depth: 0)
    private var table: TOMLTableNode
    /// Counts the headers read so far: dotted keys may extend a table only in its own section.
    private var section = 0

    private init(_ bytes: [UInt8]) {
        cursor = TOMLCursor(bytes)
        table = root
    }

    static func parse(_ text: String) throws(TOMLError) -> TOMLTable {
        try parse(bytes: Array(text.utf8))
    }

    static func parse(bytes: [UInt8]) throws(TOMLError) -> TOMLTable {
        var parser = TOMLParser(bytes)
        if let bad = TOMLCursor.firstInvalidUTF8(bytes) {
            throw parser.cursor.error("the file is not valid UTF-8", at: bad)
        }
        // A byte order mark is not TOML, but editors write it; it carries no content.
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { parser.cursor.offset = 3 }
        try parser.document()
        return parser.root.finished
    }

    static func isBareKeyByte(_ byte: UInt8) -> Bool {
        switch byte {
        case 0x30...0x39, 0x41...0x5A, 0x61...0x7A, UInt8(ascii: "_"), UInt8(ascii: "-"): return true
        default: return false
        }
    }

    // MARK: Statements

    private mutating func document() throws(TOMLError) {
        while true {
            cursor.skipWhitespace()
            guard let byte = cursor.current else { return }
            if cursor.skipNewline() { continue }
            if byte == UInt8(ascii: "[") {
                try header()
            } else if Self.isBareKeyByte(byte) || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "'") {
                let start = cursor.offset
                let (path, value) = try keyValue(in: table.depth)
                do {
                    try table.assign(path, value, section: section)
                } catch {
                    throw cursor.error(error.reason, at: start)
                }
            } else if byte != UInt8(ascii: "#") {
                throw cursor.error(
                    byte == 0x0D
                        ? "a carriage return must be followed by a line feed"
                        : "expected a key, a [table] header or a comment")
            }
            cursor.skipWhitespace()
            try cursor.skipComment()
            guard !cursor.atEnd else { return }
            guard cursor.skipNewline() else {
                throw cursor.error(
                    cursor.current == 0x0D
                        ? "a carriage return must be followed by a line feed"
                        : "expected the end of the line")
            }
        }
    }

    private mutating func header() throws(TOMLError) {
        let start = cursor.offset
        let isArray = cursor.starts(with: "[[")
        cursor.offset += isArray ? 2 : 1
        cursor.skipWhitespace()
        let path = try key(in: 0)
        guard cursor.starts(with: isArray ? "]]" : "]") else {
            throw cursor.error(isArray ? "expected ]] to close the array of tables header" : "expected ] to close the table header")
        }
        cursor.offset += isArray ? 2 : 1
        section += 1
        do {
            table = isArray ? try root.appendTable(path) : try root.defineTable(path)
        } catch {
            throw cursor.error(error.reason, at: start)
        }
    }

    // MARK: Keys

    /// A bare, quoted or dotted key, and the whitespace after it. Each part followed by a dot
    /// names a table one level below the last, starting below a table at `depth`: a key too
    /// deep is refused at the part that goes too deep, before the rest of it is read.
    private mutating func key(in depth: Int) throws(TOMLError) -> [String] {
        var start = cursor.offset
        var path = [try keyPart()]
        cursor.skipWhitespace()
        while cursor.current == UInt8(ascii: ".") {
            guard depth + path.count <= Self.deepestNesting else { throw cursor.error(Self.tooDeep, at: start) }
            cursor.offset += 1
            cursor.skipWhitespace()
            start = cursor.offset
            path.append(try keyPart())
            cursor.skipWhitespace()
        }
        return path
    }

    private mutating func keyPart() throws(TOMLError) -> String {
        switch cursor.current {
        case UInt8(ascii: "\""), UInt8(ascii: "'"):
            return try cursor.string(allowMultiline: false)
        case let byte? where Self.isBareKeyByte(byte):
            let start = cursor.offset
            while let next = cursor.current, Self.isBareKeyByte(next) { cursor.offset += 1 }
            return cursor.text(from: start)
        default:
            throw cursor.error("expected a key (letters, digits, _ and -, or a quoted string)")
        }
    }

    /// `key = value` in a table at `depth`: the value is as deep as the key's last table.
    private mutating func keyValue(in depth: Int) throws(TOMLError) -> ([String], TOMLValue) {
        let path = try key(in: depth)
        guard cursor.current == UInt8(ascii: "=") else { throw cursor.error("expected = after the key") }
        cursor.offset += 1
        cursor.skipWhitespace()
        return (path, try value(depth: depth + path.count - 1))
    }

    // MARK: Values

    private mutating func value(depth: Int) throws(TOMLError) -> TOMLValue {
        guard let byte = cursor.current else { throw cursor.error("expected a value") }
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "'"):
            return .string(try cursor.string())
        case UInt8(ascii: "["):
            return try array(depth: depth + 1)
        case UInt8(ascii: "{"):
            return try inlineTable(depth: depth + 1)
        case UInt8(ascii: "t"), UInt8(ascii: "f"):
            for (word, flag) in [("true", true), ("false", false)] where cursor.bytes[cursor.offset...].starts(with: word.utf8) {
                cursor.offset += word.utf8.count
                return .boolean(flag)
            }
            throw cursor.error("expected a value (true and false are lowercase; strings need quotes)")
        case 0x30...0x39:
            let kind = cursor.startsDateOrTime()
            if kind.date || kind.time { return .dateTime(try cursor.dateTime()) }
            return try cursor.number()
        case UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "i"), UInt8(ascii: "n"):
            return try cursor.number()
        default:
            throw cursor.error(Self.isBareKeyByte(byte) ? "expected a value (strings need quotes)" : "expected a value")
        }
    }

    private mutating func nest(_ depth: Int) throws(TOMLError) {
        guard depth <= Self.deepestNesting else {
            throw cursor.error(Self.tooDeep)
        }
    }

    /// `[a, b, ]`: any values, across lines, with comments; one trailing comma allowed.
    private mutating func array(depth: Int) throws(TOMLError) -> TOMLValue {
        try nest(depth)
        cursor.offset += 1
        var elements: [TOMLValue] = []
        while true {
            try cursor.skipArraySpace()
            if cursor.current == UInt8(ascii: "]") {
                cursor.offset += 1
                return .array(elements)
            }
            elements.append(try value(depth: depth))
            try cursor.skipArraySpace()
            switch cursor.current {
            case UInt8(ascii: ","): cursor.offset += 1
            case UInt8(ascii: "]"): continue
            default: throw cursor.error("expected , or ] in the array")
            }
        }
    }

    /// `{ a = 1, b.c = 2 }`: on one line, no trailing comma, complete as written.
    private mutating func inlineTable(depth: Int) throws(TOMLError) -> TOMLValue {
        try nest(depth)
        cursor.offset += 1
        let node = TOMLTableNode(.header, depth: depth)
        cursor.skipWhitespace()
        if cursor.current == UInt8(ascii: "}") {
            cursor.offset += 1
            return .table(node.finished)
        }
        while true {
            cursor.skipWhitespace()
            if cursor.current == UInt8(ascii: "}") { throw cursor.error("an inline table takes no comma after its last value") }
            if cursor.atNewline { throw cursor.error("an inline table must be written on one line") }
            let start = cursor.offset
            let (path, value) = try keyValue(in: depth)
            do {
                try node.assign(path, value, section: 0)
            } catch {
                throw cursor.error(error.reason, at: start)
            }
            cursor.skipWhitespace()
            switch cursor.current {
            case UInt8(ascii: ","): cursor.offset += 1
            case UInt8(ascii: "}"):
                cursor.offset += 1
                return .table(node.finished)
            case _ where cursor.atNewline: throw cursor.error("an inline table must be written on one line")
            default: throw cursor.error("expected , or } in the inline table")
            }
        }
    }
}
