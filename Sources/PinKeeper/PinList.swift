public import FoundationEssentials  // not Foundation: a process linking only this library loads no ICU

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

    /// `init(json:)` for a list too large to keep as `Pin`s: the same checks and errors, but each
    /// entry goes to `each` as it is read, and the list returned has no pins (only
    /// `domainsConfig`). Entries given before a throw were of a list that is not valid.
    public static func forEachEntry(json data: Data, _ each: (Pin) -> Void) throws(PinListError) -> PinList {
        let result = withoutActuallyEscaping(each) { each in
            data.withUnsafeBytes { bytes in
                Result { () throws(PinListError) in try PinListDecoder.decode(bytes, readsCacheFields: false, each: each) }
            }
        }
        return try result.get().list
    }

    /// One pass over the bytes for both the list and, for a cache file, pinkeeper's metadata
    /// object (`PinListDecoder`; only then are the metadata and the `key` members read).
    /// Takes `Data` or the bytes a reader holds already (not copied into `Data` first).
    static func decode(_ bytes: some ContiguousBytes, withMetadata: Bool) throws(PinListError) -> (
        list: PinList, metadata: CacheFile.Metadata?
    ) {
        let result = bytes.withUnsafeBytes { bytes in
            Result { () throws(PinListError) in try PinListDecoder.decode(bytes, readsCacheFields: withMetadata) }
        }
        return try result.get()
    }

    /// For `DomainsConfig`'s `Decodable` conformance, which reads its `key` only when a decoder
    /// sets this (lists and cache files are read by `PinListDecoder`, which has its own flag).
    private static let cacheFields = CodingUserInfoKey(rawValue: "pinkeeper.readsCacheFields")!

    static func readsCacheFields(_ decoder: any Decoder) -> Bool { decoder.userInfo[cacheFields] as? Bool ?? false }
}

/// Why a list could not be read: a `code` for programs, and words that point at the offending
/// field for people (`reason`, which may be worded differently in another version).
public struct PinListError: Error, Equatable, Sendable, CustomStringConvertible {
    public enum Code: Sendable, Hashable {
        /// Not JSON that the decoder reads: a syntax error, invalid UTF-8, a byte order mark,
        /// nesting deeper than 512 levels.
        case notJSON
        /// JSON, but not a valid list: a member missing, null, of the wrong type or repeated, or
        /// a value out of range (a fingerprint that is not 32 bytes of base64, a negative depth).
        case invalidContent
        /// A cache file without pinkeeper's `"pinkeeper"` metadata object.
        case missingMetadata
        /// A cache file whose `pinkeeper.format` this version does not read.
        case unsupportedFormat
    }

    public var code: Code
    public var reason: String

    public init(_ code: Code, reason: String) {
        self.code = code
        self.reason = reason
    }

    public var description: String { reason }
}
