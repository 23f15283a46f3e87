/// The answer to "may I trust this TLS peer?" with Wultra's semantics (PROTOCOL.md §5).
/// Callers must reject the handshake on both `untrusted` and `empty`.
public enum Verdict: String, Sendable {
    case trusted
    case untrusted
    /// No live pin exists for the name: the store needs an update.
    case empty
}

/// Decides trust from a set of pins (published cache plus fallback pins).
public struct PinValidator: Sendable {
    public var pins: [Pin]
    public var expectedCommonNames: [String]?
    public var domainsConfig: DomainsConfig?

    public init(pins: [Pin], expectedCommonNames: [String]? = nil, domainsConfig: DomainsConfig? = nil) {
        self.pins = pins
        self.expectedCommonNames = expectedCommonNames
        self.domainsConfig = domainsConfig
    }

    /// Checks one certificate fingerprint (raw SHA-256 of its DER) at `depth` of the verified chain.
    public func validate(commonName: String, fingerprint: [UInt8], depth: Int = 0, now: Int64) -> Verdict {
        decide(commonName: commonName, now: now) { pin in
            pin.depth == depth ? pin.fingerprint == fingerprint : nil
        }
    }

    /// Checks the *verified* chain of DER certificates, leaf first: the path the TLS stack built
    /// and accepted (with OpenSSL, `SSL_get0_verified_chain`), ending with the trust anchor. Never
    /// pass the certificates the server sent: a server may append any public certificate, even
    /// a pinned one, which path building ignores. Each pin is compared with the certificate at
    /// its `depth`; pins deeper than the chain are skipped.
    public func validate(commonName: String, verifiedChain: [[UInt8]], now: Int64) -> Verdict {
        let digests = verifiedChain.map(SHA256.digest)
        return decide(commonName: commonName, now: now) { pin in
            pin.depth < digests.count ? digests[pin.depth] == pin.fingerprint : nil
        }
    }

    /// `matches` returns nil when a pin does not apply to the certificates given, else whether it matched.
    private func decide(commonName: String, now: Int64, matches: (Pin) -> Bool?) -> Verdict {
        // The operator's own list comes first: nothing the server sends widens it.
        if let expectedCommonNames, !expectedCommonNames.contains(commonName) { return .untrusted }
        if let domainsConfig, !domainsConfig.pinningRequired(for: commonName) { return .trusted }
        if pins.isEmpty { return .empty }
        var attempts = 0
        for pin in pins where pin.name == commonName && !pin.isExpired(at: now) {
            switch matches(pin) {
            case true?: return .trusted
            case false?: attempts += 1
            case nil: continue
            }
        }
        return attempts > 0 ? .untrusted : .empty
    }
}
