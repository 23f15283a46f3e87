import Glibc

/// A strict RFC 8259 reader over the bytes of one document, for `PinListDecoder`.
///
/// Strict where Foundation's `JSONDecoder` is lenient, also inside members nobody reads: UTF-8
/// only (no byte order mark, no UTF-16), no invalid UTF-8 or lone surrogate escapes in any string,
/// no trailing commas, only RFC 8259 numbers. A document that one reader of the cache (this one,
/// Python's, `jq`) reads differently from another is refused instead. Values are skipped
/// without recursion, so no nesting can exhaust the stack; deeper than `maxDepth` is refused.
struct JSONScanner {
    /// The deepest nesting accepted, the document's own object counting as 1 (as `JSONDecoder`'s).
    static let maxDepth = 512

    enum Kind { case string, number, object, array, boolean, null }

    // Not private: the string scanning in JSONScanner+Strings.swift reads them too.
    let bytes: UnsafeRawBufferPointer
    var position = 0
    /// The unescaped bytes of the last escaped string read with `withStringBytes`.
    var scratch: [UInt8] = []

    init(_ bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
    }

    func syntaxError(_ what: String, at offset: Int? = nil) -> PinListError {
        PinListError(.notJSON, reason: "not valid JSON (\(what) at byte \(offset ?? position))")
    }

    var startsWithByteOrderMark: Bool {
        bytes.count >= 3 && bytes[0] == 0xEF && bytes[1] == 0xBB && bytes[2] == 0xBF
    }

    mutating func skipWhitespace() {
        while position < bytes.count {
            switch bytes[position] {
            case 0x20, 0x0A, 0x0D, 0x09: position += 1
            default: return
            }
        }
    }

    var atEnd: Bool { position == bytes.count }

    /// The bytes after `position`.
    var remaining: Int { bytes.count - position }

    /// The kind of the value that starts at the next non-whitespace byte (which is not consumed).
    mutating func peekKind() throws(PinListError) -> Kind {
        skipWhitespace()
        guard position < bytes.count else { throw syntaxError("unexpected end, a value was expected") }
        switch bytes[position] {
        case UInt8(ascii: "\""): return .string
        case UInt8(ascii: "{"): return .object
        case UInt8(ascii: "["): return .array
        case UInt8(ascii: "t"), UInt8(ascii: "f"): return .boolean
        case UInt8(ascii: "n"): return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number
        default: throw unexpectedByte()
        }
    }

    private func unexpectedByte() -> PinListError {
        let byte = bytes[position]
        let shown =
            byte >= 0x21 && byte < 0x7F ? "'\(Character(Unicode.Scalar(byte)))'" : "byte 0x\(String(byte, radix: 16, uppercase: true))"
        return syntaxError("unexpected \(shown)")
    }

    // MARK: Containers

    /// Consumes `{` and reports whether a member follows (false: `}` was consumed too).
    mutating func beginObject() throws(PinListError) -> Bool {
        try begin(closing: UInt8(ascii: "}"), "an object")
    }

    /// After a member's value: consumes `,` (true, another member follows) or `}` (false).
    mutating func nextMember() throws(PinListError) -> Bool {
        try separator(closing: UInt8(ascii: "}"), "an object")
    }

    /// Consumes `[` and reports whether an element follows (false: `]` was consumed too).
    mutating func beginArray() throws(PinListError) -> Bool {
        try begin(closing: UInt8(ascii: "]"), "an array")
    }

    /// Consumes the opening bracket and reports whether a member or element follows.
    private mutating func begin(closing: UInt8, _ container: String) throws(PinListError) -> Bool {
        position += 1
        skipWhitespace()
        guard position < bytes.count else { throw syntaxError("unexpected end inside \(container)") }
        if bytes[position] == closing {
            position += 1
            return false
        }
        return true
    }

    /// After an element: consumes `,` (true, another element follows) or `]` (false).
    mutating func nextElement() throws(PinListError) -> Bool {
        try separator(closing: UInt8(ascii: "]"), "an array")
    }

    private mutating func separator(closing: UInt8, _ container: String) throws(PinListError) -> Bool {
        skipWhitespace()
        guard position < bytes.count else { throw syntaxError("unexpected end inside \(container)") }
        switch bytes[position] {
        case UInt8(ascii: ","):
            position += 1
            return true
        case closing:
            position += 1
            return false
        default:
            throw unexpectedByte()
        }
    }

    /// Reads a member's name and the `:` after it; `identify` sees its unescaped bytes.
    mutating func readKey<Key>(_ identify: (UnsafeRawBufferPointer) -> Key) throws(PinListError) -> Key {
        skipWhitespace()
        guard position < bytes.count else { throw syntaxError("unexpected end, a member name was expected") }
        guard bytes[position] == UInt8(ascii: "\"") else { throw unexpectedByte() }
        // A member name is almost always plain ASCII: its closing quote is then the first byte
        // the word scan stops at, and nothing in it needs `scanString`'s checks.
        let key: Key
        let end = plainASCIIEnd(from: position + 1)
        if end < bytes.count && bytes[end] == UInt8(ascii: "\"") {
            key = identify(UnsafeRawBufferPointer(rebasing: bytes[position + 1..<end]))
            position = end + 1
        } else {
            key = try withStringBytes(identify)
        }
        skipWhitespace()
        guard position < bytes.count else { throw syntaxError("unexpected end, ':' was expected") }
        guard bytes[position] == UInt8(ascii: ":") else { throw unexpectedByte() }
        position += 1
        return key
    }

    /// Moves past the value at `position` when its bytes repeat those of `token`, a value read
    /// before (its checks then passed already): a token's bytes alone decide where it ends.
    mutating func skipRepeatedToken(_ token: Range<Int>) -> Bool {
        guard !token.isEmpty, bytes.count - position >= token.count,
            memcmp(bytes.baseAddress! + position, bytes.baseAddress! + token.lowerBound, token.count) == 0
        else { return false }
        position += token.count
        return true
    }

    // MARK: Scalars

    /// Reads the string at `position` (its opening quote) and lets `body` see its unescaped UTF-8.
    mutating func withStringBytes<R>(_ body: (UnsafeRawBufferPointer) -> R) throws(PinListError) -> R {
        let (start, end, escaped) = try scanString()
        if !escaped { return body(UnsafeRawBufferPointer(rebasing: bytes[start..<end])) }
        unescape(start..<end)
        return scratch.withUnsafeBytes(body)
    }

    mutating func readString() throws(PinListError) -> String {
        try withStringBytes { String(decoding: $0, as: UTF8.self) }
    }

    /// The digest of the string at `position` when it is 44 base64 characters as written, and
    /// moves past it; else nil, without moving. Such a string holds no quote, escape, control or
    /// non-ASCII byte, so it needs none of `scanString`'s checks; any other goes through them.
    mutating func readPlainDigest() -> SHA256Digest? {
        guard bytes.count - position >= 46, bytes[position + 45] == UInt8(ascii: "\""),
            let digest = Base64Digest.decode(UnsafeRawBufferPointer(rebasing: bytes[position + 1..<position + 45]))
        else { return nil }
        position += 46
        return digest
    }

    /// Reads `true`, `false` or `null` (nil).
    mutating func readLiteral() throws(PinListError) -> Bool? {
        func matches(_ word: StaticString) -> Bool {
            let count = word.utf8CodeUnitCount
            guard bytes.count - position >= count else { return false }
            return UnsafeRawBufferPointer(start: word.utf8Start, count: count)
                .elementsEqual(UnsafeRawBufferPointer(rebasing: bytes[position..<position + count]))
        }
        let value: Bool?
        if matches("true") {
            value = true; position += 4
        } else if matches("false") {
            value = false; position += 5
        } else if matches("null") {
            value = nil; position += 4
        } else {
            throw syntaxError("not true, false or null")
        }
        return value
    }

    /// Reads an RFC 8259 number; its value when it is written as an integer (no fraction, no
    /// exponent: `1.0` and `1e3` are not integers here) that fits in an Int64, else nil.
    mutating func readNumber() throws(PinListError) -> Int64? {
        let start = position
        let negative = bytes[position] == UInt8(ascii: "-")
        if negative { position += 1 }
        guard position < bytes.count, isDigit(bytes[position]) else { throw syntaxError("a number without digits", at: start) }
        // Accumulated as a negative number so that Int64.min fits.
        var value: Int64 = 0
        var fits = true
        if bytes[position] == UInt8(ascii: "0") {
            position += 1
        } else {
            while position < bytes.count, isDigit(bytes[position]) {
                if fits {
                    let (shifted, overflow) = value.multipliedReportingOverflow(by: 10)
                    let (next, underflow) = shifted.subtractingReportingOverflow(Int64(bytes[position] &- UInt8(ascii: "0")))
                    if overflow || underflow { fits = false } else { value = next }
                }
                position += 1
            }
        }
        var integer = true
        if position < bytes.count, bytes[position] == UInt8(ascii: ".") {
            integer = false
            position += 1
            try digits(start)
        }
        if position < bytes.count, bytes[position] | 0x20 == UInt8(ascii: "e") {
            integer = false
            position += 1
            if position < bytes.count, bytes[position] == UInt8(ascii: "+") || bytes[position] == UInt8(ascii: "-") { position += 1 }
            try digits(start)
        }
        guard integer, fits else { return nil }
        if negative { return value }
        return value == .min ? nil : -value
    }

    private mutating func digits(_ numberStart: Int) throws(PinListError) {
        guard position < bytes.count, isDigit(bytes[position]) else { throw syntaxError("a number with a missing digit", at: numberStart) }
        while position < bytes.count, isDigit(bytes[position]) { position += 1 }
    }

    private func isDigit(_ byte: UInt8) -> Bool { byte &- UInt8(ascii: "0") < 10 }

    // MARK: Skipping

    /// Checks and skips one value of any shape. `depth` is the nesting of the container it is in.
    /// Iterative: the open containers are a list, not stack frames.
    mutating func skipValue(depth: Int) throws(PinListError) {
        var openObjects: [Bool] = []  // per open container: true for an object, false for an array
        while true {
            // One value.
            switch try peekKind() {
            case .string: _ = try scanString()
            case .number: _ = try readNumber()
            case .boolean, .null: _ = try readLiteral()
            case .object, .array:
                let isObject = bytes[position] == UInt8(ascii: "{")
                guard depth + openObjects.count < Self.maxDepth else { throw syntaxError("nested deeper than \(Self.maxDepth) levels") }
                if try isObject ? beginObject() : beginArray() {
                    openObjects.append(isObject)
                    if isObject { try readKey { _ in () } }
                    continue
                }
            }
            // Close every container that ends after it; stop at the next value.
            while let isObject = openObjects.last {
                if isObject {
                    if try nextMember() {
                        try readKey { _ in () }
                        break
                    }
                } else if try nextElement() {
                    break
                }
                openObjects.removeLast()
            }
            if openObjects.isEmpty { return }
        }
    }

}
