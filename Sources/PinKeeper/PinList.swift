// FoundationEssentials where it exists: a process linking only this library loads no ICU.
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A Wultra fingerprint list as served by a pinning service, bundled as fallback data, or
/// published in the cache: `{"fingerprints": [...], "domainsConfig": {...}}`.
/// Unknown fields (`timestamp`, `verifyVersionResult`, `pinkeeper`, …) are ignored.
public struct PinList: Sendable, Equatable {
    public var pins: [Pin]
    public var domainsConfig: DomainsConfig?

    public init(pins: [Pin], domainsConfig: DomainsConfig? = nil) {
        self.pins = pins
        self.domainsConfig = domainsConfig
    }

    /// Parses and type-checks a list. Every entry must have a string `name`, a standard-base64
    /// `fingerprint` of 32 bytes and an integer `expires`; `depth` is optional (default 0).
    public init(json data: Data) throws(PinListError) {
        self = try Self.decode(data, withMetadata: false).list
    }

    /// One JSON pass for both the list and, for a cache file, pinkeeper's metadata object.
    static func decode(_ data: Data, withMetadata: Bool) throws(PinListError) -> (list: PinList, metadata: CacheFile.Metadata?) {
        let wire: WireList
        do {
            let decoder = JSONDecoder()
            decoder.userInfo[cacheFields] = withMetadata
            wire = try decoder.decode(WireList.self, from: data)
        } catch let error as DecodingError {
            throw PinListError(describing: error)
        } catch {
            throw PinListError(reason: "not valid JSON")
        }
        var pins: [Pin] = []
        pins.reserveCapacity(wire.fingerprints.count)
        for (index, entry) in wire.fingerprints.enumerated() {
            guard let digest = Data(base64Encoded: entry.fingerprint), digest.count == 32 else {
                throw PinListError(reason: "fingerprints[\(index)].fingerprint is not the base64 of a 32-byte SHA-256 digest")
            }
            let depth = entry.depth ?? 0
            guard depth >= 0 else {
                throw PinListError(reason: "fingerprints[\(index)].depth is negative")
            }
            pins.append(Pin(name: entry.name, fingerprint: Array(digest), expires: entry.expires,
                            depth: depth, signature: entry.signature, key: entry.key))
        }
        return (PinList(pins: pins, domainsConfig: wire.domainsConfig), wire.pinkeeper)
    }

    /// Set when decoding pinkeeper's own cache file: only then are its metadata and the `key`
    /// members read (a server's list may carry anything under those names).
    private static let cacheFields = CodingUserInfoKey(rawValue: "pinkeeper.readsCacheFields")!

    static func readsCacheFields(_ decoder: Decoder) -> Bool { decoder.userInfo[cacheFields] as? Bool ?? false }

    private struct WireList: Decodable {
        var fingerprints: [WireEntry]
        var domainsConfig: DomainsConfig?
        /// Only a cache file's; a server's list may carry anything under that key.
        var pinkeeper: CacheFile.Metadata?

        private enum CodingKeys: String, CodingKey { case fingerprints, domainsConfig, pinkeeper }

        init(from decoder: Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            fingerprints = try container.decode([WireEntry].self, forKey: .fingerprints)
            domainsConfig = try container.decodeIfPresent(DomainsConfig.self, forKey: .domainsConfig)
            pinkeeper = PinList.readsCacheFields(decoder) ? try container.decodeIfPresent(CacheFile.Metadata.self, forKey: .pinkeeper) : nil
        }
    }

    private struct WireEntry: Decodable {
        var name: String
        var fingerprint: String
        var expires: Int64
        var depth: Int?
        var signature: String?
        var key: String?

        private enum CodingKeys: String, CodingKey { case name, fingerprint, expires, depth, signature, key }

        init(from decoder: Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            name = try container.decode(String.self, forKey: .name)
            fingerprint = try container.decode(String.self, forKey: .fingerprint)
            expires = try Self.integer(container, .expires)
            let hasDepth = try container.contains(.depth) && !container.decodeNil(forKey: .depth)
            depth = hasDepth ? try Self.integer(container, .depth) : nil
            signature = try container.decodeIfPresent(String.self, forKey: .signature)
            key = PinList.readsCacheFields(decoder) ? try container.decodeIfPresent(String.self, forKey: .key) : nil
        }

        /// Foundation on Linux reports a fractional or out-of-range number as "not valid JSON"
        /// without a path; turn it into a type mismatch at the field so the message names it.
        private static func integer<T: FixedWidthInteger & Decodable>(_ container: KeyedDecodingContainer<CodingKeys>,
                                                                     _ key: CodingKeys) throws -> T {
            do {
                return try container.decode(T.self, forKey: key)
            } catch let error as DecodingError {
                if case .dataCorrupted = error {} else { throw error }
            } catch {}
            throw DecodingError.typeMismatch(T.self, .init(codingPath: container.codingPath + [key], debugDescription: "not an integer"))
        }
    }
}

/// Why a list could not be read, in words that point at the offending field.
public struct PinListError: Error, Equatable, CustomStringConvertible {
    public var reason: String
    public init(reason: String) { self.reason = reason }
    public var description: String { reason }

    init(describing error: DecodingError) {
        func path(_ context: DecodingError.Context, _ key: CodingKey? = nil) -> String {
            let keys = context.codingPath + (key.map { [$0] } ?? [])
            var text = ""
            for key in keys {
                if let index = key.intValue { text += "[\(index)]" } else { text += (text.isEmpty ? "" : ".") + key.stringValue }
            }
            return text.isEmpty ? "the document" : text
        }
        switch error {
        case .keyNotFound(let key, let context):
            self.init(reason: "\(path(context, key)) is missing")
        case .typeMismatch(let type, let context):
            self.init(reason: "\(path(context)) is not \(Self.typeName(type))")
        case .valueNotFound(let type, let context):
            self.init(reason: "\(path(context)) is null, expected \(Self.typeName(type))")
        case .dataCorrupted(let context):
            self.init(reason: context.codingPath.isEmpty ? "not valid JSON" : "\(path(context)) is invalid")
        @unknown default:
            self.init(reason: "not a fingerprint list")
        }
    }

    private static func typeName(_ type: Any.Type) -> String {
        switch type {
        case is String.Type: "a string"
        case is Int64.Type, is Int.Type: "an integer"
        case is Bool.Type: "a boolean"
        case is [Any].Type: "an array"
        default: "an object"
        }
    }
}
