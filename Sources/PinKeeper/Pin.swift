/// One pinned certificate: the SHA-256 of a certificate's DER bytes, trusted for a common name
/// until `expires` (Unix seconds). `depth` is the certificate's position in the chain (0 = leaf).
public struct Pin: Hashable, Sendable {
    public var name: String
    /// SHA-256 digest of the DER certificate, held inline (a list of 100,000 pins is read
    /// without 100,000 arrays).
    public var digest: SHA256Digest
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
        name: String, digest: SHA256Digest, expires: Int64, depth: Int = 0, signature: String? = nil,
        key: String? = nil
    ) {
        self.name = name
        self.digest = digest
        self.expires = expires
        self.depth = depth
        self.signature = signature
        self.key = key
    }

    /// `fingerprint` must be 32 bytes (a SHA-256 digest).
    public init(
        name: String, fingerprint: [UInt8], expires: Int64, depth: Int = 0, signature: String? = nil,
        key: String? = nil
    ) {
        self.init(
            name: name, digest: Self.digest(fingerprint), expires: expires, depth: depth, signature: signature, key: key)
    }

    /// Raw SHA-256 digest (32 bytes) of the DER certificate, as an array (`digest` holds it).
    public var fingerprint: [UInt8] {
        get { digest.bytes }
        set { digest = Self.digest(newValue) }
    }

    private static func digest(_ fingerprint: [UInt8]) -> SHA256Digest {
        guard let digest = SHA256Digest(fingerprint) else {
            preconditionFailure("a pin's fingerprint is a 32-byte SHA-256 digest, not \(fingerprint.count) bytes")
        }
        return digest
    }

    public var fingerprintBase64: String {
        var text: [UInt8] = []
        Base64Digest.encode(digest, into: &text)
        return String(decoding: text, as: UTF8.self)
    }

    /// Wultra's rule: an entry is expired once `expires` lies strictly in the past.
    public func isExpired(at now: Int64) -> Bool { expires < now }

    /// Identity used for de-duplication: two entries that differ only in signature or key are the same pin.
    public var identity: Identity { Identity(name: name, digest: digest, expires: expires, depth: depth) }

    /// Names compare by their exact Unicode scalars here, not by `String ==` (which equates
    /// canonically equivalent spellings): two spellings are two names to every reader, so
    /// neither entry may be dropped as the other's duplicate.
    public struct Identity: Hashable, Sendable {
        public var name: String
        public var digest: SHA256Digest
        public var expires: Int64
        public var depth: Int

        public var fingerprint: [UInt8] { digest.bytes }

        public static func == (a: Identity, b: Identity) -> Bool {
            a.digest == b.digest && a.expires == b.expires && a.depth == b.depth
                && NameBytes.equal(a.name, b.name)
        }

        public func hash(into hasher: inout Hasher) {
            hasher.combine(digest)
            hasher.combine(expires)
            hasher.combine(depth)
            var name = name
            name.withUTF8 { bytes in
                hasher.combine(bytes.count)
                hasher.combine(bytes: UnsafeRawBufferPointer(bytes))
            }
        }
    }

    /// Whether `pins` are strictly increasing in `publishedOrder`: sorted, and no two of one
    /// identity, as every list pinkeeper writes is. Compared where they lie (a caller comparing
    /// pairs one call at a time copies both pins for each call).
    public static func inPublishedOrder(_ pins: [Pin]) -> Bool {
        pins.withUnsafeBufferPointer { pins in
            pins.indices.dropFirst().allSatisfy { publishedOrder(pins[$0 - 1], pins[$0]) }
        }
    }

    /// The order of every published list: name ascending (by Unicode scalars, which is UTF-8
    /// byte order), then latest expiry first. Fingerprint and depth only break ties, so the
    /// output is deterministic.
    public static func publishedOrder(_ a: Pin, _ b: Pin) -> Bool {
        let names = NameBytes.compare(a.name, b.name)
        if names != 0 { return names < 0 }
        if a.expires != b.expires { return a.expires > b.expires }
        if a.depth != b.depth { return a.depth < b.depth }
        return a.digest < b.digest
    }
}
