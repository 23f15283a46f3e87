/// The 2026 `domainsConfig` object: which names need pinning at all (compared as `PinName`s).
public struct DomainsConfig: Hashable, Sendable, Codable {
    public struct Domain: Hashable, Sendable, Codable {
        public var name: String
        public var sslPinningRequired: Bool
        public init(name: String, sslPinningRequired: Bool) {
            self.name = name
            self.sslPinningRequired = sslPinningRequired
        }
    }

    public var sslPinningRequiredForUnlisted: Bool
    public var domains: [Domain]
    /// In a cache file: the id of the configured key that verified the response it came with
    /// (see `Pin.key`). Never read from a server's list.
    public var key: String?

    public init(sslPinningRequiredForUnlisted: Bool, domains: [Domain], key: String? = nil) {
        self.sslPinningRequiredForUnlisted = sslPinningRequiredForUnlisted
        self.domains = domains
        self.key = key
    }

    private enum CodingKeys: String, CodingKey { case sslPinningRequiredForUnlisted, domains, key }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        sslPinningRequiredForUnlisted = try container.decode(Bool.self, forKey: .sslPinningRequiredForUnlisted)
        domains = try container.decode([Domain].self, forKey: .domains)
        // A server could name any key here: only pinkeeper's own cache file records one.
        key = PinList.readsCacheFields(decoder) ? try container.decodeIfPresent(String.self, forKey: .key) : nil
    }

    /// Whether a peer known by `name` must match a pin; the first entry listing the name decides.
    public func pinningRequired(for name: PinName) -> Bool {
        domains.first { name.matches($0.name) }?.sslPinningRequired ?? sslPinningRequiredForUnlisted
    }

    public func pinningRequired(for name: String) -> Bool { pinningRequired(for: PinName(name)) }
}
