public import FoundationEssentials  // not Foundation: a process linking only this library loads no ICU

/// A store's published cache file: a Wultra list plus pinkeeper's metadata (docs/cache-format.md).
public struct CacheFile: Sendable, Equatable {
    public static let formatVersion = 1

    public struct Metadata: Sendable, Equatable, Codable {
        public var format: Int
        public var store: String
        public var source: String
        /// Unix seconds of the last successful, verified update.
        public var updated: Int64
        /// Unix seconds at which the daemon plans its next fetch.
        public var nextUpdate: Int64
        /// How the store's list is signed. nil in files written before pinkeeper recorded it:
        /// those are read as before (challenge semantics).
        public var mode: ListMode?

        public init(
            format: Int = CacheFile.formatVersion, store: String, source: String, updated: Int64, nextUpdate: Int64,
            mode: ListMode? = nil
        ) {
            self.format = format
            self.store = store
            self.source = source
            self.updated = updated
            self.nextUpdate = nextUpdate
            self.mode = mode
        }
    }

    public var list: PinList
    public var metadata: Metadata

    public init(list: PinList, metadata: Metadata) {
        self.list = list
        self.metadata = metadata
    }

    /// Reads a cache file's bytes; the list part must satisfy `PinList`'s rules.
    ///
    /// A static-mode file is read as only its signed part: `domainsConfig` is ignored and an entry
    /// with a `depth` is skipped. pinkeeper writes neither there, so such a member was put in by
    /// something else, and skipping the entry (rather than reading it as a leaf pin) can only make
    /// fewer certificates trusted.
    public init(json data: Data) throws(PinListError) { try self.init(contents: data) }

    /// The same over the bytes a reader read.
    init(json bytes: [UInt8]) throws(PinListError) { try self.init(contents: bytes) }

    private init(contents: some ContiguousBytes) throws(PinListError) {
        var (list, metadata) = try PinList.decode(contents, withMetadata: true)
        let checked = try Self.check(&list, metadata)
        self.init(list: list, metadata: checked)
    }

    /// The metadata a cache file must have; a static file's list narrowed to its signed part.
    private static func check(_ list: inout PinList, _ metadata: Metadata?) throws(PinListError) -> Metadata {
        guard let metadata else {
            throw PinListError(.missingMetadata, reason: "the \"pinkeeper\" metadata object is missing")
        }
        guard metadata.format == Self.formatVersion else {
            throw PinListError(.unsupportedFormat, reason: "unsupported cache format \(metadata.format)")
        }
        if metadata.mode == .static {
            list.domainsConfig = nil
            list.pins.removeAll { $0.depth != 0 }
        }
        return metadata
    }

    /// The exact bytes pinkeeper publishes: entries in `Pin.publishedOrder`, one per line,
    /// `depth` only when non-zero, `signature` and `key` only when known, then `domainsConfig` and metadata.
    /// Appended to one pre-sized buffer: a 10,000-entry store is written on every update.
    public func encoded() -> Data { Data(encodedBytes()) }

    /// `encoded()` as an array, which a writer can take without a copy.
    public func encodedBytes() -> [UInt8] {
        var out = JSONOutput()
        // Each entry's strings plus its fixed text (keys, quotes, at most 20 digits per number):
        // growing a buffer this size by doubling would hold both copies at once.
        out.bytes.reserveCapacity(
            list.pins.reduce(512) { size, pin in
                size + 128 + pin.name.utf8.count + 44 + (pin.signature?.utf8.count ?? 0)
                    + (pin.key?.utf8.count ?? 0)
            })
        Self.encode(list.pins, list.domainsConfig, metadata, into: &out, pieceSize: .max) { _ in }
        return out.bytes
    }

    /// `encodedBytes()` in pieces of at least `pieceSize` bytes (the last may be shorter), each
    /// handed to `write` as soon as it is full: a writer never holds the whole file (about 25 MB
    /// for a 100,000-entry list). The pieces joined are `encodedBytes()`, byte for byte.
    public func encode<Failure: Error>(
        inPiecesOf pieceSize: Int, to write: ([UInt8]) throws(Failure) -> Void
    ) throws(Failure) {
        try Self.encode(pins: list.pins, domainsConfig: list.domainsConfig, metadata: metadata, inPiecesOf: pieceSize, to: write)
    }

    /// The file of these pins, `domainsConfig` and metadata, from pins made one at a time (in
    /// published order): the same bytes as `encode(inPiecesOf:to:)` of the file holding them.
    public static func encode<Pins: Sequence<Pin>, Failure: Error>(
        pins: Pins, domainsConfig: DomainsConfig?, metadata: Metadata,
        inPiecesOf pieceSize: Int, to write: ([UInt8]) throws(Failure) -> Void
    ) throws(Failure) {
        var out = JSONOutput()
        out.bytes.reserveCapacity(pieceSize + 4096)
        try encode(pins, domainsConfig, metadata, into: &out, pieceSize: pieceSize, write)
        if !out.bytes.isEmpty { try write(out.bytes) }
    }

    /// Writes whole pieces of at least `pieceSize` bytes as they fill; the rest stays in `out`.
    private static func encode<Pins: Sequence<Pin>, Failure: Error>(
        _ pins: Pins, _ domainsConfig: DomainsConfig?, _ metadata: Metadata,
        into out: inout JSONOutput, pieceSize: Int, _ write: ([UInt8]) throws(Failure) -> Void
    ) throws(Failure) {
        out.put("{\n  \"fingerprints\": [")
        var empty = true
        for pin in pins {
            out.put(empty ? "\n    {\"name\": " : ",\n    {\"name\": ")
            empty = false
            encode(pin, into: &out)
            if out.bytes.count >= pieceSize {
                try write(out.bytes)
                out.bytes.removeAll(keepingCapacity: true)
            }
        }
        out.put(empty ? "],\n" : "\n  ],\n")
        if let domainsConfig { encode(domainsConfig, into: &out) }
        encode(metadata, into: &out)
    }

    /// One entry after its `{"name": `, in the order every version has written them.
    private static func encode(_ pin: Pin, into out: inout JSONOutput) {
        out.putString(pin.name)
        out.put(", \"fingerprint\": \"")
        Base64Digest.encode(pin.digest, into: &out.bytes)
        out.put("\", \"expires\": ")
        out.putInteger(pin.expires)
        if pin.depth != 0 {
            out.put(", \"depth\": ")
            out.putInteger(Int64(pin.depth))
        }
        if let signature = pin.signature {
            out.put(", \"signature\": ")
            out.putString(signature)
        }
        if let key = pin.key {
            out.put(", \"key\": ")
            out.putString(key)
        }
        out.put("}")
    }

    private static func encode(_ domains: DomainsConfig, into out: inout JSONOutput) {
        out.put("  \"domainsConfig\": {\"sslPinningRequiredForUnlisted\": \(domains.sslPinningRequiredForUnlisted), \"domains\": [")
        for (index, domain) in domains.domains.enumerated() {
            out.put(index == 0 ? "{\"name\": " : ", {\"name\": ")
            out.putString(domain.name)
            out.put(", \"sslPinningRequired\": \(domain.sslPinningRequired)}")
        }
        out.put("]")
        if let key = domains.key {
            out.put(", \"key\": ")
            out.putString(key)
        }
        out.put("},\n")
    }

    private static func encode(_ metadata: Metadata, into out: inout JSONOutput) {
        out.put("  \"pinkeeper\": {\"format\": \(metadata.format), \"store\": ")
        out.putString(metadata.store)
        if let mode = metadata.mode { out.put(", \"mode\": \"\(mode.rawValue)\"") }
        out.put(", \"source\": ")
        out.putString(metadata.source)
        out.put(", \"updated\": \(metadata.updated), \"nextUpdate\": \(metadata.nextUpdate)}\n}\n")
    }
}

/// A JSON string literal with the escapes RFC 8259 requires (shared by every JSON pinkeeper writes).
public func jsonString(_ value: String) -> String {
    var out = "\""
    for scalar in value.unicodeScalars {
        switch scalar {
        case "\"": out += "\\\""
        case "\\": out += "\\\\"
        case "\n": out += "\\n"
        case "\r": out += "\\r"
        case "\t": out += "\\t"
        case _ where scalar.value < 0x20:
            let hex = String(scalar.value, radix: 16)  // "\u001f", as %04x would print it
            out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
        default: out.unicodeScalars.append(scalar)
        }
    }
    return out + "\""
}
