/// What a probe found, as logs, status and metrics name it.
public enum ProbeOutcome: String, Sendable, Codable, CaseIterable {
    /// The verified chain the host serves is pinned, and stays pinned beyond
    /// `expiration_update_threshold` (or a replacement is already pinned).
    case pinned
    /// The verified chain matches no pin for the host name: clients that enforce this store
    /// reject the host now.
    case unpinned
    /// Pinned today, but the pins run out within `expiration_update_threshold`: either the only
    /// pins for the served certificate expire, or the pinned certificate itself expires and no
    /// replacement is pinned yet.
    case expiring
    /// No verdict: the connection or the TLS handshake failed, or OpenSSL did not verify the
    /// chain or the host name.
    case error
}

/// The result of probing one target, as the daemon keeps it in the state directory.
public struct ProbeRecord: Sendable, Codable, Equatable {
    /// `host:port`.
    public var target: String
    public var outcome: ProbeOutcome
    /// When the probe ran, in Unix seconds.
    public var checked: Int64
    /// Since when the outcome has been this one (the first probe that found it).
    public var since: Int64
    /// Why, in one sentence for an operator.
    public var reason: String
    /// The address the connection reached, e.g. `10.0.0.5:8443`; nil when none was reached.
    public var peer: String?
    /// The served leaf certificate (verified, or as presented when verification failed):
    /// base64 SHA-256 of its DER and its `notAfter` in Unix seconds.
    public var leafFingerprint: String?
    public var leafExpires: Int64?
    /// Until when the store's pins protect the served chain (the longest-lasting matching pin,
    /// or the certificate it names if that expires first); nil when no pin matches. An
    /// `expiring` probe makes the daemon fetch the store when its next update comes later.
    public var trustedUntil: Int64?

    public init(
        target: String, outcome: ProbeOutcome, checked: Int64, since: Int64? = nil, reason: String,
        peer: String? = nil, leafFingerprint: String? = nil, leafExpires: Int64? = nil
    ) {
        self.target = target
        self.outcome = outcome
        self.checked = checked
        self.since = since ?? checked
        self.reason = reason
        self.peer = peer
        self.leafFingerprint = leafFingerprint
        self.leafExpires = leafExpires
    }
}
