import Foundation
import PinKeeper

/// The `JSONDecoder`-based list decoder that `PinListDecoder` replaced, kept as it was (apart
/// from names) as the reference for `PinListDecoderDifferentialTests`.
enum ReferencePinListDecoder {
    static func list(_ data: Data) throws(PinListError) -> PinList {
        try decode(data, withMetadata: false).list
    }

    /// `CacheFile(json:)` as it was, over the reference decoder.
    static func cacheFile(_ data: Data) throws(PinListError) -> CacheFile {
        var (list, metadata) = try decode(data, withMetadata: true)
        guard let metadata else {
            throw PinListError(.missingMetadata, reason: "the \"pinkeeper\" metadata object is missing")
        }
        guard metadata.format == CacheFile.formatVersion else {
            throw PinListError(.unsupportedFormat, reason: "unsupported cache format \(metadata.format)")
        }
        if metadata.mode == .static {
            list.domainsConfig = nil
            list.pins.removeAll { $0.depth != 0 }
        }
        return CacheFile(list: list, metadata: metadata)
    }

    static func decode(_ data: Data, withMetadata: Bool) throws(PinListError) -> (list: PinList, metadata: CacheFile.Metadata?) {
        let wire: WireList
        do {
            let decoder = JSONDecoder()
            decoder.userInfo[cacheFields] = withMetadata
            wire = try decoder.decode(WireList.self, from: data)
        } catch let error as DecodingError {
            throw Self.error(describing: error)
        } catch {
            throw PinListError(.notJSON, reason: "not valid JSON")
        }
        var pins: [Pin] = []
        pins.reserveCapacity(wire.fingerprints.count)
        for (index, entry) in wire.fingerprints.enumerated() {
            guard let digest = Data(base64Encoded: entry.fingerprint), digest.count == 32 else {
                throw PinListError(
                    .invalidContent, reason: "fingerprints[\(index)].fingerprint is not the base64 of a 32-byte SHA-256 digest")
            }
            let depth = entry.depth ?? 0
            guard depth >= 0 else {
                throw PinListError(.invalidContent, reason: "fingerprints[\(index)].depth is negative")
            }
            pins.append(
                Pin(
                    name: entry.name, fingerprint: Array(digest), expires: entry.expires,
                    depth: depth, signature: entry.signature, key: entry.key))
        }
        return (PinList(pins: pins, domainsConfig: wire.domainsConfig), wire.pinkeeper)
    }

    /// The user-info key PinList used, which DomainsConfig's `Decodable` conformance still reads.
    private static let cacheFields = CodingUserInfoKey(rawValue: "pinkeeper.readsCacheFields")!

    static func readsCacheFields(_ decoder: any Decoder) -> Bool { decoder.userInfo[cacheFields] as? Bool ?? false }

    private struct WireList: Decodable {
        var fingerprints: [WireEntry]
        var domainsConfig: DomainsConfig?
        var pinkeeper: CacheFile.Metadata?

        private enum CodingKeys: String, CodingKey { case fingerprints, domainsConfig, pinkeeper }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            fingerprints = try container.decode([WireEntry].self, forKey: .fingerprints)
            domainsConfig = try container.decodeIfPresent(DomainsConfig.self, forKey: .domainsConfig)
            pinkeeper =
                ReferencePinListDecoder.readsCacheFields(decoder)
                ? try container.decodeIfPresent(CacheFile.Metadata.self, forKey: .pinkeeper) : nil
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

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            name = try container.decode(String.self, forKey: .name)
            fingerprint = try container.decode(String.self, forKey: .fingerprint)
            expires = try Self.integer(container, .expires)
            let hasDepth = try container.contains(.depth) && !container.decodeNil(forKey: .depth)
            depth = hasDepth ? try Self.integer(container, .depth) : nil
            signature = try container.decodeIfPresent(String.self, forKey: .signature)
            key = ReferencePinListDecoder.readsCacheFields(decoder) ? try container.decodeIfPresent(String.self, forKey: .key) : nil
        }

        private static func integer<T: FixedWidthInteger & Decodable>(
            _ container: KeyedDecodingContainer<CodingKeys>,
            _ key: CodingKeys
        ) throws -> T {
            do {
                return try container.decode(T.self, forKey: key)
            } catch let error as DecodingError {
                if case .dataCorrupted = error {} else { throw error }
            } catch {}
            throw DecodingError.typeMismatch(T.self, .init(codingPath: container.codingPath + [key], debugDescription: "not an integer"))
        }
    }

    private static func error(describing error: DecodingError) -> PinListError {
        func path(_ context: DecodingError.Context, _ key: (any CodingKey)? = nil) -> String {
            let keys = context.codingPath + (key.map { [$0] } ?? [])
            var text = ""
            for key in keys {
                if let index = key.intValue { text += "[\(index)]" } else { text += (text.isEmpty ? "" : ".") + key.stringValue }
            }
            return text.isEmpty ? "the document" : text
        }
        switch error {
        case .keyNotFound(let key, let context):
            return PinListError(.invalidContent, reason: "\(path(context, key)) is missing")
        case .typeMismatch(let type, let context):
            return PinListError(.invalidContent, reason: "\(path(context)) is not \(typeName(type))")
        case .valueNotFound(let type, let context):
            return PinListError(.invalidContent, reason: "\(path(context)) is null, expected \(typeName(type))")
        case .dataCorrupted(let context):
            return context.codingPath.isEmpty
                ? PinListError(.notJSON, reason: "not valid JSON") : PinListError(.invalidContent, reason: "\(path(context)) is invalid")
        @unknown default:
            return PinListError(.invalidContent, reason: "not a fingerprint list")
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
