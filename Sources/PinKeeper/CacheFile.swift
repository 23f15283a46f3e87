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

        public init(format: Int = CacheFile.formatVersion, store: String, source: String, updated: Int64, nextUpdate: Int64) {
            self.format = format
            self.store = store
            self.source = source
            self.updated = updated
            self.nextUpdate = nextUpdate
        }
    }

    public var list: PinList
    public var metadata: Metadata

    public init(list: PinList, metadata: Metadata) {
        self.list = list
        self.metadata = metadata
    }

    /// Reads a cache file's bytes; the list part must satisfy `PinList`'s rules.
    public init(json data: Data) throws(PinListError) {
        let list = try PinList(json: data)
        guard let envelope = try? JSONDecoder().decode(Envelope.self, from: data) else {
            throw PinListError(reason: "the \"pinkeeper\" metadata object is missing or malformed")
        }
        guard envelope.pinkeeper.format == Self.formatVersion else {
            throw PinListError(reason: "unsupported cache format \(envelope.pinkeeper.format)")
        }
        self.init(list: list, metadata: envelope.pinkeeper)
    }

    private struct Envelope: Decodable { var pinkeeper: Metadata }

    /// The exact bytes pinkeeper publishes: entries in `Pin.publishedOrder`, one per line,
    /// `depth` only when non-zero, `signature` only when known, then `domainsConfig` and metadata.
    public func encoded() -> Data {
        var out = "{\n  \"fingerprints\": ["
        for (index, pin) in list.pins.enumerated() {
            out += index == 0 ? "\n    {" : ",\n    {"
            out += "\"name\": \(jsonString(pin.name)), \"fingerprint\": \"\(pin.fingerprintBase64)\", \"expires\": \(pin.expires)"
            if pin.depth != 0 { out += ", \"depth\": \(pin.depth)" }
            if let signature = pin.signature { out += ", \"signature\": \(jsonString(signature))" }
            out += "}"
        }
        out += list.pins.isEmpty ? "],\n" : "\n  ],\n"
        if let domains = list.domainsConfig {
            out += "  \"domainsConfig\": {\"sslPinningRequiredForUnlisted\": \(domains.sslPinningRequiredForUnlisted), \"domains\": ["
            out += domains.domains.map { "{\"name\": \(jsonString($0.name)), \"sslPinningRequired\": \($0.sslPinningRequired)}" }
                .joined(separator: ", ")
            out += "]},\n"
        }
        let meta = metadata
        out += "  \"pinkeeper\": {\"format\": \(meta.format), \"store\": \(jsonString(meta.store)), "
        out += "\"source\": \(jsonString(meta.source)), \"updated\": \(meta.updated), \"nextUpdate\": \(meta.nextUpdate)}\n}\n"
        return Data(out.utf8)
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
