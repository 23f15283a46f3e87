import PinKeeper
import Logging

extension StoreUpdater {
    /// What `reconcileCache` would do to a store's file, found without writing anything.
    struct ReconcileCheck: Sendable {
        /// The file differs from what the configuration allows, or challenge mode must fetch.
        var needed = false
        /// Challenge mode lost or cannot confirm pins: fetch at once, whether due or not.
        var fetchNow = false
    }

    /// Read only and cheap enough for the daemon's scheduling loop: nothing is written (not even
    /// a copy of a corrupt file) and no signature is verified. A static pin that records no
    /// configured key counts as needing work without re-verifying it: the update does that,
    /// under the store's lock. A corrupt or newer-format file needs nothing here; the update
    /// deals with it when the store is due.
    func reconcileCheck(_ store: StoreConfig, now: Int64) -> ReconcileCheck {
        reconcileCheck(store, loaded: cache.load(store: store.id, now: now))
    }

    /// The same check on a version of the file the caller has read already (start-up reads
    /// each file once, for this and for the store's due time).
    func reconcileCheck(_ store: StoreConfig, loaded file: CacheDirectory.Loaded) -> ReconcileCheck {
        guard case .valid(let loaded) = file else { return ReconcileCheck() }
        let configured = Set(store.publicKeys.map(\.id))
        if store.mode == .static && loaded.list.pins.contains(where: { $0.key.map(configured.contains) != true }) {
            return ReconcileCheck(needed: true)
        }
        let result = CachedPins.reconcile(loaded, store: store)
        return ReconcileCheck(needed: result.changed || result.fetchNow, fetchNow: result.fetchNow)
    }

    /// Loads a store's published file and brings it in line with the store's configuration
    /// (`CachedPins`). When that changes anything the result is published at once, server or
    /// no server: readers must stop trusting a removed key's pins now, and a store left with no
    /// pins must not keep the old file's. Runs before every update (`pinkeeper update`
    /// included), and only there: `lock` proves the caller holds the store, so that an update
    /// of another process can never be published over by a reduced copy of an older file.
    ///
    /// Returns the file as it now stands (nil: none, or unusable) and whether it was changed;
    /// `refusal` when the file must not be published over at all (a newer cache format).
    func reconcileCache(_ store: StoreConfig, now: Int64, holding lock: StoreLock)
        -> (cache: CacheFile?, changed: Bool, refusal: UpdateFailure?)
    {
        let (found, refusal) = loadCache(store, now: now, keepingCopy: true)  // under the lock: the one writer of a copy
        guard let loaded = found else { return (nil, false, refusal) }
        let result = CachedPins.reconcile(loaded, store: store)
        guard result.changed else { return (loaded, false, nil) }
        let file = cache.filePath(for: store.id)
        if result.ignoredUnsignedFields {
            logger.warning(
                "the cached static list carried unsigned depth or domainsConfig; both are ignored",
                metadata: [
                    "store": "\(store.id)", "file": "\(file)",
                ])
        }
        if result.dropped > 0 || result.droppedDomainsConfig {
            logger.warning(
                "dropped pins no configured public key vouches for",
                metadata: [
                    "event": "\(LogEventID.pinsDropped.rawValue)", "store": "\(store.id)", "dropped": "\(result.dropped)",
                    "pins": "\(result.file.list.pins.filter { !$0.isExpired(at: now) }.count)",
                    "domains_config_dropped": "\(result.droppedDomainsConfig)",
                    "fetch": result.fetchNow ? "now" : "as scheduled", "cause": "key-removed",
                ])
        }
        if result.unconfirmed > 0 || result.unconfirmedDomainsConfig {
            logger.notice(
                "pins written by an older pinkeeper record no key; kept until the next verified fetch",
                metadata: [
                    "store": "\(store.id)", "pins": "\(result.unconfirmed)", "domains_config": "\(result.unconfirmedDomainsConfig)",
                ])
        }
        forgetValidators(store)
        do {
            try cache.publish(result.file)
            _ = envoy?.sync(store, now: now)  // already off the pool: the reconcile is file work
            announceChange(
                store, before: loaded.list.pins.filter { !$0.isExpired(at: now) },
                after: result.file.list.pins.filter { !$0.isExpired(at: now) })
        } catch let error where error.afterReplacing {
            logger.error(
                "the reconciled cache file replaced the old one, but may not survive a power loss",
                metadata: ["store": "\(store.id)", "file": "\(file)", "reason": "\(Self.unsyncedReason(error, file: file))"])
        } catch {
            logger.error(
                "cannot publish the reconciled cache file; readers keep the old pins until it can be written",
                metadata: [
                    "store": "\(store.id)", "file": "\(file)", "reason": "\(error)",
                ])
        }
        return (result.file, true, nil)
    }

    /// The remembered ETag, Last-Modified and body digest describe the list as it was before the
    /// file was reduced: a 304 or an identical body would re-publish the reduced pins without
    /// parsing the list again. Forgotten first (before the publish), so that the next fetch is
    /// unconditional and verified in full even after a crash in between.
    private func forgetValidators(_ store: StoreConfig) {
        var memory = state.load(store: store.id)
        guard memory.etag != nil || memory.lastModified != nil || memory.bodyDigest != nil else { return }
        memory.forgetValidators()
        saveOrWarn("store state", store: store.id, otherwise: "the next fetch may be conditional", logger: logger) { () throws(FileError) in
            try state.save(memory, store: store.id)
        }
    }

    /// `pinkeeper update` for a store that is not due: brings its file in line with the
    /// configuration under the store's lock, fetching nothing. `blocked`: another process holds
    /// the store (its report); `unavailable`: the lock cannot be taken (the update reports why).
    enum LockedReconcile: Sendable {
        case done(CacheFile?)
        case blocked(Report)
        case unavailable
    }

    func reconcileLocked(_ store: StoreConfig, now: Int64) async -> LockedReconcile {
        switch await StoreLock.acquire(store: store.id, in: state.path, waiting: lockWait) {
        case .success(let lock):
            defer { lock.release() }
            return .done(await BlockingWork.run { reconcileCache(store, now: now, holding: lock).cache })
        case .failure(.busy): return .blocked(busy(store))
        case .failure(.unavailable): return .unavailable
        }
    }
}
