/// The 2026 `domainsConfig` object: which common names need pinning at all.
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

    public init(sslPinningRequiredForUnlisted: Bool, domains: [Domain]) {
        self.sslPinningRequiredForUnlisted = sslPinningRequiredForUnlisted
        self.domains = domains
    }

    /// Whether a TLS peer presenting `commonName` must match a pin.
    public func pinningRequired(for commonName: String) -> Bool {
        domains.first { $0.name == commonName }?.sslPinningRequired ?? sslPinningRequiredForUnlisted
    }
}
