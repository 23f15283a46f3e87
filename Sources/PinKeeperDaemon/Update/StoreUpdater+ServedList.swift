import PinKeeper

extension StoreUpdater {
    /// The `ListDigest` of a list that passed verification: every entry in challenge mode (the
    /// response signature covered them all, and `domainsConfig` with them). In static mode only
    /// what its signatures cover: name, fingerprint and expiry (depth 0, no `domainsConfig`), of
    /// the unexpired entries (all verified, or identical to a verified pin, or the list would have
    /// been rejected) and of the expired entries whose own signature verifies, so that neither the
    /// time of the fetch nor an unsigned entry a CDN slipped in moves the digest.
    func servedDigest(_ list: PinList, store: StoreConfig, now: Int64) -> String {
        guard store.mode == .static else { return ListDigest.of(pins: list.pins, domainsConfig: list.domainsConfig) }
        let leaves = list.pins.map { pin in
            var leaf = pin
            leaf.depth = 0
            return leaf
        }
        let expired = leaves.filter { $0.isExpired(at: now) }
        let verifiedExpired = zip(expired, SignatureVerifier(keys: store.publicKeys).keysVerifyingEntries(expired))
            .compactMap { $1 == nil ? nil : $0 }
        return ListDigest.of(pins: leaves.filter { !$0.isExpired(at: now) } + verifiedExpired, domainsConfig: nil)
    }

    /// Logs the digest when it differs from the one remembered (the first one included), and
    /// returns what to remember.
    func noteServedList(_ digest: String?, previous: String?, store: StoreConfig) -> String? {
        guard let digest, digest != previous else { return previous }
        logger.notice(
            "the pinning service served a different list",
            metadata: [
                "event": "\(LogEventID.listChanged.rawValue)", "store": "\(store.id)", "list_digest": "\(digest)",
                "previous": "\(previous ?? "none")",
            ])
        return digest
    }
}
