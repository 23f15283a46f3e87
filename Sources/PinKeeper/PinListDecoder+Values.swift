import Glibc

/// The values of the members the decoder knows, each read with its type and checked once, and
/// the problems it reports.
extension PinListDecoder {
    // MARK: Values

    /// Reads a known member's value the first time its name appears in an object (of nesting
    /// `depth`); a second time makes it `.duplicate`.
    mutating func member<Value>(
        _ field: inout Field<Value>, in depth: Int,
        _ read: (inout Self) throws(PinListError) -> Field<Value>
    ) throws(PinListError) {
        guard case .missing = field else {
            field = .duplicate
            return try scanner.skipValue(depth: depth)
        }
        field = try read(&self)
    }

    mutating func string(depth: Int) throws(PinListError) -> Field<String> {
        let kind = try scanner.peekKind()
        return kind == .string ? .value(try scanner.readString()) : try other(kind, depth: depth)
    }

    enum Repeated { case name, key }

    /// A string, which is the previous entry's name or key again when its token repeats the
    /// previous one's bytes (the same token is the same valid string).
    mutating func string(depth: Int, reusing repeated: Repeated) throws(PinListError) -> Field<String> {
        let kind = try scanner.peekKind()
        guard kind == .string else { return try other(kind, depth: depth) }
        // Each branch reads its own field: a copy of the whole LastString would retain its value.
        if repeated == .name {
            if scanner.skipRepeatedToken(lastName.token) { return .value(lastName.value) }
        } else if scanner.skipRepeatedToken(lastKey.token) {
            return .value(lastKey.value)
        }
        let start = scanner.position
        let value = try scanner.readString()
        let read = LastString(token: start..<scanner.position, value: value)
        if repeated == .name { lastName = read } else { lastKey = read }
        return .value(value)
    }

    mutating func integer(depth: Int) throws(PinListError) -> Field<Int64> {
        let kind = try scanner.peekKind()
        guard kind == .number else { return try other(kind, depth: depth) }
        return try scanner.readNumber().map { .value($0) } ?? .wrongType
    }

    mutating func boolean(depth: Int) throws(PinListError) -> Field<Bool> {
        let kind = try scanner.peekKind()
        guard kind == .boolean else {
            // JSONDecoder called a null boolean "not a boolean" (a null string "null"): same words.
            let field: Field<Bool> = try other(kind, depth: depth)
            if case .null = field { return .wrongType }
            return field
        }
        return .value(try scanner.readLiteral()!)
    }

    /// A fingerprint's 32 bytes, `.value(nil)` for a string that is not their base64.
    mutating func digest() throws(PinListError) -> Field<SHA256Digest?> {
        let kind = try scanner.peekKind()
        guard kind == .string else { return try other(kind, depth: 3) }
        if let digest = scanner.readPlainDigest() { return .value(digest) }
        return .value(try scanner.withStringBytes(Base64Digest.decode))
    }

    /// Skips a value that is not of the kind wanted: `.null` or `.wrongType`.
    mutating func other<Value>(_ kind: JSONScanner.Kind, depth: Int) throws(PinListError) -> Field<Value> {
        if kind == .null {
            _ = try scanner.readLiteral()
            return .null
        }
        try scanner.skipValue(depth: depth)
        return .wrongType
    }

    // MARK: Problems

    static func note(_ error: inout String?, _ reason: @autoclosure () -> String) {
        if error == nil { error = reason() }
    }

    static func problem<Value>(_ field: Field<Value>, _ path: String, _ expected: String) -> PinListError {
        switch field {
        case .missing: PinListError(.invalidContent, reason: "\(path) is missing")
        case .null: PinListError(.invalidContent, reason: "\(path) is null, expected \(expected)")
        case .wrongType: PinListError(.invalidContent, reason: "\(path) is not \(expected)")
        case .duplicate: PinListError(.invalidContent, reason: "\(path) appears more than once")
        case .invalid(let reason): PinListError(.invalidContent, reason: reason)
        case .value: PinListError(.invalidContent, reason: "\(path) is valid")
        }
    }

    /// The value of a member that must be there, or nil after noting why it is not usable.
    static func required<Value>(
        _ field: consuming Field<Value>, _ error: inout String?,
        _ path: @autoclosure () -> String, _ expected: String
    ) -> Value? {
        switch consume field {
        case .value(let value): return value
        case let other:
            note(&error, problem(other, path(), expected).reason)
            return nil
        }
    }

    /// `.some(nil)` for a member that is absent or null, nil after noting why it is not usable.
    static func optional<Value>(
        _ field: consuming Field<Value>, _ error: inout String?,
        _ path: @autoclosure () -> String, _ expected: String
    ) -> Value?? {
        switch consume field {
        case .value(let value): return .some(value)
        case .missing, .null: return .some(nil)
        case let other:
            note(&error, problem(other, path(), expected).reason)
            return nil
        }
    }
}
