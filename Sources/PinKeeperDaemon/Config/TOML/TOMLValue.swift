/// One TOML value as the configuration code reads it. Tables and arrays are plain values:
/// the table rules are enforced while the document is read (`TOMLTableTree`), not afterwards.
enum TOMLValue: Sendable, Equatable {
    case string(String)
    case integer(Int64)
    case float(Double)
    case boolean(Bool)
    case dateTime(TOMLDateTime)
    case array([TOMLValue])
    case table(TOMLTable)

    var string: String? {
        if case .string(let text) = self { return text }
        return nil
    }

    /// Only an integer: a float such as 1.0 is not one, as TOML keeps the two apart.
    var int: Int? {
        if case .integer(let number) = self { return Int(exactly: number) }
        return nil
    }

    var bool: Bool? {
        if case .boolean(let flag) = self { return flag }
        return nil
    }

    var array: [TOMLValue]? {
        if case .array(let elements) = self { return elements }
        return nil
    }

    var table: TOMLTable? {
        if case .table(let table) = self { return table }
        return nil
    }
}

/// A finished table. Keys are compared byte for byte, as TOML does (Swift's `String` equality
/// would merge canonically equivalent keys such as "é" and "e\u{301}", which TOML keeps apart).
struct TOMLTable: Sendable, Equatable {
    private var entries: [TOMLKey: TOMLValue] = [:]

    init() {}

    init(_ pairs: [(String, TOMLValue)]) {
        for (key, value) in pairs { entries[TOMLKey(key)] = value }
    }

    /// In UTF-8 byte order (code point order), so that messages about "the first unknown key"
    /// do not depend on hashing.
    var keys: [String] {
        entries.keys.map(\.text).sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
    }

    var count: Int { entries.count }

    subscript(key: String) -> TOMLValue? {
        get { entries[TOMLKey(key)] }
        set { entries[TOMLKey(key)] = newValue }
    }
}

/// A key that is equal to another only when their UTF-8 bytes are.
struct TOMLKey: Hashable, Sendable {
    let text: String

    init(_ text: String) { self.text = text }

    static func == (a: TOMLKey, b: TOMLKey) -> Bool { a.text.utf8.elementsEqual(b.text.utf8) }

    func hash(into hasher: inout Hasher) {
        for byte in text.utf8 { hasher.combine(byte) }
        hasher.combine(0xFF as UInt8)  // never a UTF-8 byte: ends the key
    }
}
