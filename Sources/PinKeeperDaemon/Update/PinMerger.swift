public import PinKeeper

/// Merges a verified-or-to-be-verified response with the pins a store already trusts
/// (docs/protocol.md §4): expired entries are skipped, known entries are not verified again,
/// one bad entry rejects the whole response, and the result is in published order.
///
/// Every pin that comes out records the configured key that verified it (`Pin.key`), and a
/// cached pin carries over only when its key is still configured (`CachedPins` re-verifies
/// static pins beforehand). A static list's unsigned `depth` and `domainsConfig` are dropped.
///
/// `authoritative` (challenge mode only, `authoritative = true`): the response, signed over a
/// fresh challenge, is the server's whole current list, so a cached pin carries over only if
/// the response lists it again, and a list with nothing valid leaves the store empty.
public struct PinMerger: Sendable {
    public var mode: ListMode
    public var verifier: SignatureVerifier
    public var expectedCommonNames: [String]?
    public var authoritative: Bool

    public init(mode: ListMode, verifier: SignatureVerifier, expectedCommonNames: [String]? = nil, authoritative: Bool = false) {
        self.mode = mode
        self.verifier = verifier
        self.expectedCommonNames = expectedCommonNames
        self.authoritative = authoritative && mode == .challenge  // a static list may be a replay
    }

    public struct Outcome: Sendable, Equatable {
        public var pins: [Pin]
        public var domainsConfig: DomainsConfig?
        /// Received pins that were not known before.
        public var added: Int
        /// Received entries skipped because they had already expired.
        public var expiredReceived: Int
        /// Common names outside `expected_common_names` (kept, but worth a warning).
        public var unexpectedNames: [String]
        /// A static list carried `domainsConfig` or a `depth`, which its signatures do not cover.
        public var ignoredUnsignedFields = false
        /// Authoritative: unexpired cached pins that the response no longer lists.
        public var unlisted = 0
    }

    /// `responseKey`: challenge mode, the key that verified the response signature.
    public func merge(
        cached: [Pin], received: PinList, responseKey: PublicKey? = nil,
        now: Int64
    ) throws(UpdateFailure) -> Outcome {
        if mode == .static {
            return try mergeStatic(
                cached: cached, received: StaticEntries(received.pins), hadDomainsConfig: received.domainsConfig != nil, now: now
            ).outcome
        }
        return try mergeDecoded(cached: cached, received: received, responseKey: responseKey, now: now)
    }

    /// The merge rules written out plainly over a decoded list, for both modes. A challenge list
    /// always takes this way. A static list takes `mergeStatic` (compact entries, verified early,
    /// its file written while verifying); it comes here only from FastPathPropertyTests, which
    /// need this simple path beside that fast one to require the same pins, failures and bytes.
    func mergeDecoded(
        cached: [Pin], received: PinList, responseKey: PublicKey? = nil, now: Int64
    ) throws(UpdateFailure) -> Outcome {
        let configured = Set(verifier.keys.map(\.id))
        var merged = cached.filter { !$0.isExpired(at: now) && $0.key.map(configured.contains) == true }
        var unlisted = 0
        if authoritative {
            let listed = Set(received.pins.lazy.filter { !$0.isExpired(at: now) }.map(\.identity))
            let valid = Set(cached.lazy.filter { !$0.isExpired(at: now) }.map(\.identity))
            unlisted = valid.subtracting(listed).count
            merged.removeAll { !listed.contains($0.identity) }
        }
        var known = Set(merged.map(\.identity))
        var fresh: [Pin] = []
        var expired = 0
        for var pin in received.pins {
            if pin.isExpired(at: now) { expired += 1; continue }
            if mode == .static { pin.depth = 0 }  // outside the signed bytes
            guard known.insert(pin.identity).inserted else { continue }
            if mode == .challenge {
                pin.signature = nil  // the response signature covered it
                pin.key = responseKey?.id
            }
            fresh.append(pin)
        }
        if mode == .static { try verifyEntries(&fresh) }

        var unexpected: [String] = []
        if let expectedCommonNames {
            var seen = Set(expectedCommonNames.map { PinName($0) })
            unexpected = fresh.map(\.name).filter { seen.insert(PinName($0)).inserted }.sorted()
        }
        merged += fresh
        merged.sort(by: Pin.publishedOrder)
        // Wultra keeps what it had rather than publish nothing; the server's whole list may be empty.
        guard !merged.isEmpty || authoritative else {
            let why = received.pins.isEmpty ? "the list is empty" : "every entry in the list has expired"
            throw UpdateFailure(.storeEmpty, "\(why) and no cached pin is still valid")
        }
        var domainsConfig = mode == .challenge ? received.domainsConfig : nil
        domainsConfig?.key = responseKey?.id
        return Outcome(
            pins: merged, domainsConfig: domainsConfig, added: fresh.count, expiredReceived: expired,
            unexpectedNames: unexpected,
            ignoredUnsignedFields: mode == .static && (received.domainsConfig != nil || received.pins.contains { $0.depth != 0 }),
            unlisted: unlisted)
    }

    /// Static: every new entry must carry a signature that verifies, checked in list order so
    /// that the first bad entry is the one named; each is tagged with the key that verified it.
    private func verifyEntries(_ pins: inout [Pin]) throws(UpdateFailure) {
        for pin in pins where pin.signature == nil || pin.signature == "" {
            throw UpdateFailure(.invalidData, "the entry '\(pin.name)' (expires \(pin.expires)) has no signature")
        }
        for (index, key) in verifier.keysVerifyingEntries(pins).enumerated() {
            guard let key else {
                throw UpdateFailure(
                    .invalidSignature,
                    "the signature of entry '\(pins[index].name)' (expires \(pins[index].expires))"
                        + " does not verify under any configured public key")
            }
            pins[index].key = key.id
        }
    }
}
