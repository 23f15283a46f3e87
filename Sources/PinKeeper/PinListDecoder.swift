#if canImport(Glibc)
import Glibc
#endif

/// Reads a Wultra list, or pinkeeper's cache file, straight from its bytes in one pass.
///
/// It replaced `JSONDecoder`, which spent most of an unchanged update re-reading the cache
/// file. It accepts what that decoder accepted and reports the same first problem with the same
/// words, except where `JSONDecoder` was lenient (see `JSONScanner`, `Base64Digest`):
/// numbers like `1.0` or `1e3` are not integers, and a member read here that appears twice
/// (which `JSONDecoder` read as its first occurrence and Python's `json` as its last) is refused.
/// Members it does not know are skipped, whatever their shape.
// Members are internal, not private: the value readers in PinListDecoder+Values.swift use them.
struct PinListDecoder {
    var scanner: JSONScanner
    let readsCacheFields: Bool
    /// Takes each valid entry instead of the list: a caller that keeps entries its own way.
    let each: ((Pin) -> Void)?

    // The first problem of each part. When several parts have one, the document is reported by
    // the first in this order, which is the order `JSONDecoder` met them in (whatever their
    // order in the document); a syntax error anywhere is thrown at once and comes before all.
    var fingerprintsError: String?
    var domainsConfigError: String?
    var metadataError: String?
    /// A fingerprint that is not base64 or a negative depth: checked after all the types.
    var entryValueError: String?
    /// A `pinkeeper.mode` this version does not know: unsupported, once the content is valid.
    var unknownMode: String?

    /// The previous entry's name and key. Entries of one name follow each other and a file has
    /// few keys, so an entry that repeats them shares their storage instead of allocating its own.
    var lastName = LastString(), lastKey = LastString()

    /// A string value and where its token (quotes included) lies in the document.
    struct LastString {
        var token = 0..<0
        var value = ""
    }

    init(_ bytes: UnsafeRawBufferPointer, readsCacheFields: Bool, each: ((Pin) -> Void)?) {
        scanner = JSONScanner(bytes)
        self.readsCacheFields = readsCacheFields
        self.each = each
    }

    /// `each`: every valid entry goes there as it is read, and the list returned has none. The
    /// checks and the error thrown are the same; entries given before a throw were of a list
    /// that is not valid.
    static func decode(_ bytes: UnsafeRawBufferPointer, readsCacheFields: Bool, each: ((Pin) -> Void)? = nil)
        throws(PinListError) -> (list: PinList, metadata: CacheFile.Metadata?)
    {
        var decoder = PinListDecoder(bytes, readsCacheFields: readsCacheFields, each: each)
        return try decoder.document()
    }

    /// A member of a known object, before its type was checked against what the field needs.
    enum Field<Value> {
        case missing
        case value(Value)
        case null
        case wrongType
        case duplicate
        /// Of the right type, but something inside it is wrong (the message says what).
        case invalid(String)
    }

    enum Key {
        case fingerprints, domainsConfig, pinkeeper
        case name, fingerprint, expires, depth, signature, key
        case sslPinningRequiredForUnlisted, domains, sslPinningRequired
        case format, store, source, updated, nextUpdate, mode
        case other

        static func identify(_ bytes: UnsafeRawBufferPointer) -> Key {
            // Called with the length checked: only the bytes remain to compare.
            func equals(_ name: StaticString) -> Bool { memcmp(bytes.baseAddress!, name.utf8Start, bytes.count) == 0 }
            switch bytes.count {
            case 3: return equals("key") ? .key : .other
            case 4: return equals("name") ? .name : equals("mode") ? .mode : .other
            case 5: return equals("depth") ? .depth : equals("store") ? .store : .other
            case 6: return equals("format") ? .format : equals("source") ? .source : .other
            case 7: return equals("expires") ? .expires : equals("domains") ? .domains : equals("updated") ? .updated : .other
            case 9: return equals("signature") ? .signature : equals("pinkeeper") ? .pinkeeper : .other
            case 10: return equals("nextUpdate") ? .nextUpdate : .other
            case 11: return equals("fingerprint") ? .fingerprint : .other
            case 12: return equals("fingerprints") ? .fingerprints : .other
            case 13: return equals("domainsConfig") ? .domainsConfig : .other
            case 18: return equals("sslPinningRequired") ? .sslPinningRequired : .other
            case 29: return equals("sslPinningRequiredForUnlisted") ? .sslPinningRequiredForUnlisted : .other
            default: return .other
            }
        }
    }

    // MARK: The document

    private mutating func document() throws(PinListError) -> (list: PinList, metadata: CacheFile.Metadata?) {
        if scanner.startsWithByteOrderMark {
            throw PinListError(.notJSON, reason: "not valid JSON (starts with a UTF-8 byte order mark)")
        }
        var pins: Field<[Pin]> = .missing
        var domainsConfig: Field<DomainsConfig> = .missing
        var metadata: Field<CacheFile.Metadata> = .missing
        let kind = try scanner.peekKind()
        if kind == .object {
            if try scanner.beginObject() {
                repeat {
                    switch try scanner.readKey(Key.identify) {
                    case .fingerprints: try member(&pins, in: 1) { (d) throws(PinListError) in try d.fingerprints() }
                    case .domainsConfig: try member(&domainsConfig, in: 1) { (d) throws(PinListError) in try d.domainsConfig() }
                    case .pinkeeper where readsCacheFields: try member(&metadata, in: 1) { (d) throws(PinListError) in try d.metadata() }
                    default: try scanner.skipValue(depth: 1)
                    }
                } while try scanner.nextMember()
            }
        } else if kind == .null {
            _ = try scanner.readLiteral()
        } else {
            try scanner.skipValue(depth: 0)
        }
        scanner.skipWhitespace()
        guard scanner.atEnd else { throw scanner.syntaxError("more data after the document") }

        if kind != .object { throw Self.problem(kind == .null ? Field<Never>.null : .wrongType, "the document", "an object") }
        let list = Self.required(pins, &fingerprintsError, "fingerprints", "an array")
        let domains = Self.optional(domainsConfig, &domainsConfigError, "domainsConfig", "an object")
        let meta = Self.optional(metadata, &metadataError, "pinkeeper", "an object")
        if let reason = fingerprintsError ?? domainsConfigError ?? metadataError ?? entryValueError {
            throw PinListError(.invalidContent, reason: reason)
        }
        if let unknownMode {
            throw PinListError(.unsupportedFormat, reason: "pinkeeper.mode \(jsonString(unknownMode)) is not a mode this version reads")
        }
        return (PinList(pins: list!, domainsConfig: domains!), meta!)
    }

    // MARK: fingerprints

    private mutating func fingerprints() throws(PinListError) -> Field<[Pin]> {
        let kind = try scanner.peekKind()
        guard kind == .array else { return try other(kind, depth: 1) }
        var pins: [Pin] = []
        let start = scanner.position
        if try scanner.beginArray() {
            var index = 0
            repeat {
                try entry(index, into: &pins)
                index += 1
                // Once the first entries show their size, room for as many more as the rest of
                // the document could hold: growing by doubling would copy 100,000 pins and touch
                // twice their memory. Any shortfall grows as usual. An entry that makes a pin
                // takes 64 bytes at least, which bounds the guess whatever the first ones were.
                // Entries handed to `each` are not kept here.
                if index == 64 && each == nil {
                    pins.reserveCapacity(index + scanner.remaining / max(64, (scanner.position - start) / index))
                }
            } while try scanner.nextElement()
        }
        return .value(pins)
    }

    private mutating func entry(_ index: Int, into pins: inout [Pin]) throws(PinListError) {
        let kind = try scanner.peekKind()
        guard kind == .object else {
            let field: Field<Pin> = try other(kind, depth: 2)
            _ = Self.required(field, &fingerprintsError, "fingerprints[\(index)]", "an object")
            return
        }
        var name: Field<String> = .missing, fingerprint: Field<SHA256Digest?> = .missing, expires: Field<Int64> = .missing
        var depth: Field<Int64> = .missing, signature: Field<String> = .missing, key: Field<String> = .missing
        if try scanner.beginObject() {
            repeat {
                switch try scanner.readKey(Key.identify) {
                case .name: try member(&name, in: 3) { (d) throws(PinListError) in try d.string(depth: 3, reusing: .name) }
                case .fingerprint: try member(&fingerprint, in: 3) { (d) throws(PinListError) in try d.digest() }
                case .expires: try member(&expires, in: 3) { (d) throws(PinListError) in try d.integer(depth: 3) }
                case .depth: try member(&depth, in: 3) { (d) throws(PinListError) in try d.integer(depth: 3) }
                case .signature: try member(&signature, in: 3) { (d) throws(PinListError) in try d.string(depth: 3) }
                case .key where readsCacheFields:
                    try member(&key, in: 3) { (d) throws(PinListError) in try d.string(depth: 3, reusing: .key) }
                default: try scanner.skipValue(depth: 3)
                }
            } while try scanner.nextMember()
        }
        // Only the first problem of the list is reported: after it, only the syntax matters.
        guard fingerprintsError == nil else { return }
        // Built only for a message: an interpolated string per entry would cost an allocation.
        func at(_ member: String) -> String { "fingerprints[\(index)].\(member)" }
        // The fields are consumed: their strings move into the pin instead of being copied.
        guard let name = Self.required(consume name, &fingerprintsError, at("name"), "a string"),
            let digest = Self.required(fingerprint, &fingerprintsError, at("fingerprint"), "a string"),
            let expires = Self.required(expires, &fingerprintsError, at("expires"), "an integer"),
            let depth = Self.optional(depth, &fingerprintsError, at("depth"), "an integer"),
            let signature = Self.optional(consume signature, &fingerprintsError, at("signature"), "a string"),
            let key = Self.optional(consume key, &fingerprintsError, at("key"), "a string")
        else { return }
        guard let digest else {
            return Self.note(&entryValueError, "\(at("fingerprint")) is not the base64 of a 32-byte SHA-256 digest")
        }
        guard (depth ?? 0) >= 0 else { return Self.note(&entryValueError, "\(at("depth")) is negative") }
        let pin = Pin(name: name, digest: digest, expires: expires, depth: Int(depth ?? 0), signature: signature, key: key)
        if let each { each(pin) } else { pins.append(pin) }
    }

    // MARK: domainsConfig

    private mutating func domainsConfig() throws(PinListError) -> Field<DomainsConfig> {
        let kind = try scanner.peekKind()
        guard kind == .object else { return try other(kind, depth: 1) }
        var unlisted: Field<Bool> = .missing, domains: Field<[DomainsConfig.Domain]> = .missing, key: Field<String> = .missing
        if try scanner.beginObject() {
            repeat {
                switch try scanner.readKey(Key.identify) {
                case .sslPinningRequiredForUnlisted: try member(&unlisted, in: 2) { (d) throws(PinListError) in try d.boolean(depth: 2) }
                case .domains: try member(&domains, in: 2) { (d) throws(PinListError) in try d.domains() }
                case .key where readsCacheFields: try member(&key, in: 2) { (d) throws(PinListError) in try d.string(depth: 2) }
                default: try scanner.skipValue(depth: 2)
                }
            } while try scanner.nextMember()
        }
        var error: String?
        guard let unlisted = Self.required(unlisted, &error, "domainsConfig.sslPinningRequiredForUnlisted", "a boolean"),
            let domains = Self.required(domains, &error, "domainsConfig.domains", "an array"),
            let key = Self.optional(key, &error, "domainsConfig.key", "a string")
        else { return .invalid(error!) }
        return .value(DomainsConfig(sslPinningRequiredForUnlisted: unlisted, domains: domains, key: key))
    }

    private mutating func domains() throws(PinListError) -> Field<[DomainsConfig.Domain]> {
        let kind = try scanner.peekKind()
        guard kind == .array else { return try other(kind, depth: 2) }
        var domains: [DomainsConfig.Domain] = []
        var error: String?
        if try scanner.beginArray() {
            var index = 0
            repeat {
                if let domain = try domain(index, &error) { domains.append(domain) }
                index += 1
            } while try scanner.nextElement()
        }
        return error.map { .invalid($0) } ?? .value(domains)
    }

    /// One element of `domains`; nil after a problem (in `error`), and for every element after it.
    private mutating func domain(_ index: Int, _ error: inout String?) throws(PinListError) -> DomainsConfig.Domain? {
        func path() -> String { "domainsConfig.domains[\(index)]" }
        let kind = try scanner.peekKind()
        guard kind == .object else {
            let field: Field<DomainsConfig.Domain> = try other(kind, depth: 3)
            _ = Self.required(field, &error, path(), "an object")
            return nil
        }
        var name: Field<String> = .missing, required: Field<Bool> = .missing
        if try scanner.beginObject() {
            repeat {
                switch try scanner.readKey(Key.identify) {
                case .name: try member(&name, in: 4) { (d) throws(PinListError) in try d.string(depth: 4) }
                case .sslPinningRequired: try member(&required, in: 4) { (d) throws(PinListError) in try d.boolean(depth: 4) }
                default: try scanner.skipValue(depth: 4)
                }
            } while try scanner.nextMember()
        }
        guard error == nil,
            let name = Self.required(name, &error, path() + ".name", "a string"),
            let required = Self.required(required, &error, path() + ".sslPinningRequired", "a boolean")
        else { return nil }
        return DomainsConfig.Domain(name: name, sslPinningRequired: required)
    }

    // MARK: pinkeeper (cache files only)

    private mutating func metadata() throws(PinListError) -> Field<CacheFile.Metadata> {
        let kind = try scanner.peekKind()
        guard kind == .object else { return try other(kind, depth: 1) }
        var format: Field<Int64> = .missing, store: Field<String> = .missing, source: Field<String> = .missing
        var updated: Field<Int64> = .missing, nextUpdate: Field<Int64> = .missing, mode: Field<String> = .missing
        if try scanner.beginObject() {
            repeat {
                switch try scanner.readKey(Key.identify) {
                case .format: try member(&format, in: 2) { (d) throws(PinListError) in try d.integer(depth: 2) }
                case .store: try member(&store, in: 2) { (d) throws(PinListError) in try d.string(depth: 2) }
                case .source: try member(&source, in: 2) { (d) throws(PinListError) in try d.string(depth: 2) }
                case .updated: try member(&updated, in: 2) { (d) throws(PinListError) in try d.integer(depth: 2) }
                case .nextUpdate: try member(&nextUpdate, in: 2) { (d) throws(PinListError) in try d.integer(depth: 2) }
                case .mode: try member(&mode, in: 2) { (d) throws(PinListError) in try d.string(depth: 2) }
                default: try scanner.skipValue(depth: 2)
                }
            } while try scanner.nextMember()
        }
        var error: String?
        guard let format = Self.required(format, &error, "pinkeeper.format", "an integer"),
            let store = Self.required(store, &error, "pinkeeper.store", "a string"),
            let source = Self.required(source, &error, "pinkeeper.source", "a string"),
            let updated = Self.required(updated, &error, "pinkeeper.updated", "an integer"),
            let nextUpdate = Self.required(nextUpdate, &error, "pinkeeper.nextUpdate", "an integer"),
            let modeName = Self.optional(mode, &error, "pinkeeper.mode", "a string")
        else { return .invalid(error!) }
        var listMode: ListMode?
        if let modeName {
            // A mode no reader knows is a newer format, never read as static or challenge.
            guard let known = ListMode(rawValue: modeName) else {
                unknownMode = modeName
                return .value(
                    CacheFile.Metadata(format: Int(format), store: store, source: source, updated: updated, nextUpdate: nextUpdate))
            }
            listMode = known
        }
        return .value(
            CacheFile.Metadata(
                format: Int(format), store: store, source: source, updated: updated,
                nextUpdate: nextUpdate, mode: listMode))
    }

}
