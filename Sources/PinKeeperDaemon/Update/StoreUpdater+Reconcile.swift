import PinKeeper

extension StoreUpdater {
    /// Loads a store's published file and brings it in line with the store's configuration
    /// (`CachedPins`). When that changes anything the result is published at once, server or
    /// no server: readers must stop trusting a removed key's pins now, and a store left with no
    /// pins must not keep the old file's. Runs when the daemon starts and reloads, and before
    /// every update (`pinkeeper update` included).
    ///
    /// Returns the file as it now stands (nil: none, or unusable) and whether the store should be
    /// fetched at once (challenge mode lost or could not confirm pins); `refusal` when the file
    /// must not be published over at all (a newer cache format).
    public func reconcileCache(_ store: StoreConfig, now: Int64)
        -> (cache: CacheFile?, fetchNow: Bool, refusal: UpdateFailure?)
    {
        let (found, refusal) = loadCache(store, now: now)
        guard let loaded = found else { return (nil, false, refusal) }
        let result = CachedPins.reconcile(loaded, store: store)
        guard result.changed else { return (loaded, result.fetchNow, nil) }
        let file = cache.filePath(for: store.id)
        if result.ignoredUnsignedFields {
            logger.warning("the cached static list carried unsigned depth or domainsConfig; both are ignored", metadata: [
                "store": "\(store.id)", "file": "\(file)",
            ])
        }
        if result.dropped > 0 || result.droppedDomainsConfig {
            logger.warning("dropped pins no configured public key vouches for", metadata: [
                "event": "\(LogEventID.pinsDropped.rawValue)", "store": "\(store.id)", "dropped": "\(result.dropped)",
                "pins": "\(result.file.list.pins.filter { !$0.isExpired(at: now) }.count)", "domains_config_dropped": "\(result.droppedDomainsConfig)",
                "fetch": result.fetchNow ? "now" : "as scheduled",
            ])
        }
        if result.unconfirmed > 0 {
            logger.notice("pins written by an older pinkeeper record no key; kept until the next verified fetch", metadata: [
                "store": "\(store.id)", "pins": "\(result.unconfirmed)",
            ])
        }
        do {
            try cache.publish(result.file)
            announceChange(store, before: loaded.list.pins.filter { !$0.isExpired(at: now) },
                           after: result.file.list.pins.filter { !$0.isExpired(at: now) })
        } catch {
            logger.error("cannot publish the reconciled cache file; readers keep the old pins until it can be written", metadata: [
                "store": "\(store.id)", "file": "\(file)", "reason": "\(error)",
            ])
        }
        return (result.file, result.fetchNow, nil)
    }
}
