import Foundation

/// A store's published cache file: a Wultra list plus pinkeeper's metadata (PRODUCT.md §4).
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
        /// The store's mode, `"challenge"` or `"static"`; absent in files from before it was written.
        public var mode: String?

        public init(format: Int = CacheFile.formatVersion, store: String, source: String, updated: Int64, nextUpdate: Int64,
                    mode: String? = nil) {
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

    /// Whether the whole list was signed: a challenge-mode response (or a file written before
    /// `mode` was). A static list signs only `name&fingerprint&expires` per entry, so its `depth`
    /// and `domainsConfig` could have been altered and must not widen trust; a mode this reader
    /// does not know is treated the same.
    public var signsWholeList: Bool { metadata.mode == nil || metadata.mode == "challenge" }

    /// The pins that may decide trust: a static list's pins at depth 0 only.
    public var usablePins: [Pin] { signsWholeList ? list.pins : list.pins.filter { $0.depth == 0 } }

    /// The `domainsConfig` that may decide trust: never a static list's.
    public var usableDomainsConfig: DomainsConfig? { signsWholeList ? list.domainsConfig : nil }

    /// Reads a cache file's bytes; the list part must satisfy `PinList`'s rules.
    public init(json data: Data) throws(PinListError) {
        let (list, metadata) = try PinList.decode(data, withMetadata: true)
        guard let metadata else {
            throw PinListError(reason: "the \"pinkeeper\" metadata object is missing")
        }
        guard metadata.format == Self.formatVersion else {
            throw PinListError(reason: "unsupported cache format \(metadata.format)")
        }
        self.init(list: list, metadata: metadata)
    }

    /// The exact bytes pinkeeper publishes: entries in `Pin.publishedOrder`, one per line,
    /// `depth` only when non-zero, `signature` only when known, then `domainsConfig` and metadata.
    /// Appended to one pre-sized buffer: a 10,000-entry store is written on every update.
    public func encoded() -> Data {
        var out: [UInt8] = []
        out.reserveCapacity(256 + list.pins.count * 200)
        func put(_ text: String) { out.append(contentsOf: text.utf8) }
        func putString(_ value: String) {
            // Names, fingerprints and signatures almost never need escaping: copy them as they are.
            if value.utf8.allSatisfy({ $0 >= 0x20 && $0 != 0x22 && $0 != 0x5C }) {
                out.append(0x22)
                out.append(contentsOf: value.utf8)
                out.append(0x22)
            } else {
                put(jsonString(value))
            }
        }
        put("{\n  \"fingerprints\": [")
        for (index, pin) in list.pins.enumerated() {
            put(index == 0 ? "\n    {\"name\": " : ",\n    {\"name\": ")
            putString(pin.name)
            put(", \"fingerprint\": \"\(pin.fingerprintBase64)\", \"expires\": \(pin.expires)")
            if pin.depth != 0 { put(", \"depth\": \(pin.depth)") }
            if let signature = pin.signature {
                put(", \"signature\": ")
                putString(signature)
            }
            put("}")
        }
        put(list.pins.isEmpty ? "],\n" : "\n  ],\n")
        if let domains = list.domainsConfig {
            put("  \"domainsConfig\": {\"sslPinningRequiredForUnlisted\": \(domains.sslPinningRequiredForUnlisted), \"domains\": [")
            for (index, domain) in domains.domains.enumerated() {
                put(index == 0 ? "{\"name\": " : ", {\"name\": ")
                putString(domain.name)
                put(", \"sslPinningRequired\": \(domain.sslPinningRequired)}")
            }
            put("]},\n")
        }
        put("  \"pinkeeper\": {\"format\": \(metadata.format), \"store\": ")
        putString(metadata.store)
        put(", \"source\": ")
        putString(metadata.source)
        put(", \"updated\": \(metadata.updated), \"nextUpdate\": \(metadata.nextUpdate)}\n}\n")
        return Data(out)
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
            out += String(format: "\\u%04x", scalar.value)
        default: out.unicodeScalars.append(scalar)
        }
    }
    return out + "\""
}
