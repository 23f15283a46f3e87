import FoundationEssentials  // not Foundation: a process linking only this library loads no ICU

/// One pinned certificate: the SHA-256 of a certificate's DER bytes, trusted for a common name
/// until `expires` (Unix seconds). `depth` is the certificate's position in the chain (0 = leaf).
public struct Pin: Hashable, Sendable {
    public var name: String
    /// Raw SHA-256 digest (32 bytes) of the DER certificate.
    public var fingerprint: [UInt8]
    public var expires: Int64
    public var depth: Int
    /// Static mode: base64 DER ECDSA signature of `name&fingerprint&expires`, kept so a reader
    /// can re-verify the entry. Not part of the pin's identity.
    public var signature: String?
    /// The id of the configured public key that verified this pin (`PublicKey.id` in the daemon),
    /// so that removing a key removes its pins. nil in pins written before pinkeeper recorded it.
    /// Not part of the pin's identity.
    public var key: String?

    public init(
        name: String, fingerprint: [UInt8], expires: Int64, depth: Int = 0, signature: String? = nil,
        key: String? = nil
    ) {
        self.name = name
        self.fingerprint = fingerprint
        self.expires = expires
        self.depth = depth
        self.signature = signature
        self.key = key
    }

    public var fingerprintBase64: String { Data(fingerprint).base64EncodedString() }

    /// Wultra's rule: an entry is expired once `expires` lies strictly in the past.
    public func isExpired(at now: Int64) -> Bool { expires < now }

    /// Identity used for de-duplication: two entries that differ only in signature or key are the same pin.
    public var identity: Identity { Identity(name: name, fingerprint: fingerprint, expires: expires, depth: depth) }

    /// Names compare by their exact Unicode scalars here, not by `String ==` (which equates
    /// canonically equivalent spellings): two spellings are two names to every reader, so
    /// neither entry may be dropped as the other's duplicate.
    public struct Identity: Hashable, Sendable {
        public var name: String
        public var fingerprint: [UInt8]
        public var expires: Int64
        public var depth: Int

        public static func == (a: Identity, b: Identity) -> Bool {
            a.fingerprint == b.fingerprint && a.expires == b.expires && a.depth == b.depth
                && a.name.utf8.elementsEqual(b.name.utf8)
        }

        public func hash(into hasher: inout Hasher) {
            hasher.combine(fingerprint)
            hasher.combine(expires)
            hasher.combine(depth)
            for byte in name.utf8 { hasher.combine(byte) }
        }
    }

    /// The order of every published list: name ascending (by Unicode scalars, which is UTF-8
    /// byte order), then latest expiry first. Fingerprint and depth only break ties, so the
    /// output is deterministic.
    public static func publishedOrder(_ a: Pin, _ b: Pin) -> Bool {
        if !a.name.utf8.elementsEqual(b.name.utf8) { return a.name.utf8.lexicographicallyPrecedes(b.name.utf8) }
        if a.expires != b.expires { return a.expires > b.expires }
        if a.depth != b.depth { return a.depth < b.depth }
        return a.fingerprint.lexicographicallyPrecedes(b.fingerprint)
    }
}
