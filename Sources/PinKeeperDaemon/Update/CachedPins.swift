import PinKeeper

/// What a store's published file may keep under the store's *current* configuration
/// (docs/cache-format.md, "Removing a key removes its pins"), decided before anything else uses the file:
///
/// - **Removing a key removes its pins.** Every pin records the configured key that verified it.
///   A static pin whose key is gone (or that records none: written by an older pinkeeper) is
///   verified again from its kept signature under the remaining keys, re-tagged, or dropped.
///   A challenge-mode pin whose key is gone cannot be re-verified (the signature covered a whole
///   response) and is dropped, and so is a `domainsConfig` that came with such a response.
///   A challenge-mode pin that records no key is kept until the next verified fetch, which
///   keeps it only if the response lists it again (see `PinMerger`). So is a `domainsConfig`
///   that records no key, unless the file shows a key was removed (it held pins of a key no
///   longer configured): then it may be the removed key's, and `sslPinningRequiredForUnlisted:
///   false` must not keep unlisted names trusted, so it goes at once (fail closed).
/// - **Nothing unsigned decides trust.** A static store's file loses `domainsConfig` and every
///   `depth` (older versions published both).
struct CachedPins {
    var file: CacheFile
    /// Pins removed because no configured key vouches for them.
    var dropped = 0
    /// Challenge mode: the `domainsConfig` came with a response of a removed key and was removed.
    var droppedDomainsConfig = false
    /// Challenge mode: pins that record no key, waiting for the next verified fetch.
    var unconfirmed = 0
    /// Challenge mode: the kept `domainsConfig` records no key, waiting for the next verified fetch.
    var unconfirmedDomainsConfig = false
    /// Static mode: the file carried `domainsConfig` or a `depth`.
    var ignoredUnsignedFields = false
    /// The result differs from the file as loaded: it must be published.
    var changed = false

    /// Challenge mode cannot restore what it dropped or confirm what it kept without the server.
    var fetchNow: Bool {
        file.metadata.mode == .challenge && (dropped > 0 || droppedDomainsConfig || unconfirmed > 0 || unconfirmedDomainsConfig)
    }

    static func reconcile(_ loaded: CacheFile, store: StoreConfig) -> CachedPins {
        var result = CachedPins(file: loaded)
        result.file.metadata.mode = store.mode
        let configured = Set(store.publicKeys.map(\.id))
        switch store.mode {
        case .static: result.reconcileStatic(store.publicKeys, configured: configured)
        case .challenge: result.reconcileChallenge(configured: configured)
        }
        result.changed = result.file != loaded
        return result
    }

    private mutating func reconcileStatic(_ keys: [PublicKey], configured: Set<String>) {
        var pins = file.list.pins
        let deep = pins.contains { $0.depth != 0 }
        ignoredUnsignedFields = file.list.domainsConfig != nil || deep
        file.list.domainsConfig = nil
        // The pins are copied only to change them: a file that keeps them all keeps its array,
        // which then compares equal to the loaded one at once (100,000 copies are not free).
        if deep {
            pins = pins.map { pin in
                var leaf = pin
                leaf.depth = 0
                return leaf
            }
        }
        // publishedOrder is a strict total order on identities: strictly increasing means already
        // sorted and free of duplicates, as every file pinkeeper writes is. One pass of
        // comparisons then replaces hashing every identity and sorting again.
        let ordered = Pin.inPublishedOrder(pins)
        if !ordered {
            var seen = Set<Pin.Identity>()
            pins = pins.filter { seen.insert($0.identity).inserted }
        }

        let stale = pins.indices.filter { pins[$0].key.map(configured.contains) != true }
        var keep = [Bool](repeating: true, count: pins.count)
        for (index, key) in zip(stale, SignatureVerifier(keys: keys).keysVerifyingEntries(stale.map { pins[$0] })) {
            if let key { pins[index].key = key.id } else { keep[index] = false }
        }
        dropped = keep.filter { !$0 }.count
        let kept = dropped == 0 ? pins : pins.indices.filter { keep[$0] }.map { pins[$0] }
        file.list.pins = ordered ? kept : kept.sorted(by: Pin.publishedOrder)
    }

    private mutating func reconcileChallenge(configured: Set<String>) {
        let before = file.list.pins.count
        file.list.pins.removeAll { $0.key.map { !configured.contains($0) } ?? false }
        dropped = before - file.list.pins.count
        unconfirmed = file.list.pins.filter { $0.key == nil }.count
        guard let config = file.list.domainsConfig else { return }
        if let key = config.key {
            guard !configured.contains(key) else { return }
        } else if dropped == 0 {
            unconfirmedDomainsConfig = true
            return
        }
        file.list.domainsConfig = nil
        droppedDomainsConfig = true
    }
}
