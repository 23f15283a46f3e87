/// The answer to "may I trust this TLS peer?" (docs/protocol.md §5). Callers must reject the
/// handshake on both `untrusted` and `empty`.
public enum Verdict: String, Sendable {
    case trusted
    case untrusted
    /// No live pin exists for the names: the store needs an update.
    case empty
}

/// Decides trust from a set of pins (published cache plus fallback pins), by the host the client
/// verified and the leaf's common name (docs/protocol.md §5).
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
    public func validate(_ names: PeerNames, fingerprint: [UInt8], depth: Int = 0, now: Int64) -> Verdict {
        let digest = SHA256Digest(fingerprint)  // nil (not 32 bytes) matches no pin
        return decide(names, now: now) { pin in
            pin.depth == depth ? pin.digest == digest : nil
        }
    }

    /// Checks the *verified* chain of DER certificates, leaf first: the path the TLS stack built
    /// and accepted (with OpenSSL, `SSL_get0_verified_chain`), ending with the trust anchor. Never
    /// pass the certificates the server sent: a server may append any public certificate, even
    /// a pinned one, which path building ignores. Each pin is compared with the certificate at
    /// its `depth`; pins deeper than the chain are skipped.
    public func validate(_ names: PeerNames, verifiedChain: [[UInt8]], now: Int64) -> Verdict {
        let digests = verifiedChain.map { SHA256Digest(SHA256.digest($0)) }
        return decide(names, now: now) { pin in
            pin.depth < digests.count ? digests[pin.depth] == pin.digest : nil
        }
    }

    /// Whether the store's `expected_common_names` admit the peer: H or N must be one of them.
    public func admits(_ names: PeerNames) -> Bool {
        guard let expectedCommonNames else { return true }
        let keys = names.keys
        return expectedCommonNames.contains { expected in keys.contains { $0.matches(expected) } }
    }

    /// `matches` returns nil when a pin does not apply to the certificates given, else whether it matched.
    private func decide(_ names: PeerNames, now: Int64, matches: (Pin) -> Bool?) -> Verdict {
        // Without the host the client verified (or with a spelling that has no one form), only
        // the name the certificate chose would be left.
        guard !names.hostRefused else { return .untrusted }
        let keys = names.keys
        // The operator's own list comes first: nothing the server sends widens it.
        guard admits(names) else { return .untrusted }
        // Skipped only if every name is exempt: the certificate's own CN never lifts the host's requirement.
        if let domainsConfig, keys.allSatisfy({ !domainsConfig.pinningRequired(for: $0) }) { return .trusted }
        if pins.isEmpty { return .empty }
        var attempts = 0
        for pin in pins where !pin.isExpired(at: now) && keys.contains(where: { $0.matches(pin.name) }) {
            switch matches(pin) {
            case true?: return .trusted
            case false?: attempts += 1
            case nil: continue
            }
        }
        return attempts > 0 ? .untrusted : .empty
    }
}
