import Logging
import PinKeeper

extension StoreUpdater {
    /// What an update starts from: the published file (reconciled with the configuration under
    /// the lock), why it must not be published over, and the store's record from the state file.
    struct Loaded: Sendable {
        var published: CacheFile?
        var refusal: UpdateFailure?
        var record: StoreState
    }

    /// File work runs on a thread of its own (`BlockingWork`): a stalled disk must not starve the
    /// pool. Without the lock nothing is written: another process may be publishing the store.
    /// One thread reads both files (the state after the reconcile, which may save it).
    func readPublished(_ store: StoreConfig, holding lock: StoreLock?, now: Int64) async -> Loaded {
        await BlockingWork.run { [state] () -> Loaded in
            guard let lock else {
                let (found, refusal) = loadCache(store, now: now)
                return Loaded(published: found, refusal: refusal, record: state.load(store: store.id))
            }
            cache.removeStaleTemps(for: store.id)
            let result = reconcileCache(store, now: now, holding: lock)
            var record = state.load(store: store.id)
            if result.changed { record.forgetValidators() }  // already on disk, unless that save failed
            return Loaded(published: result.cache, refusal: result.refusal, record: record)
        }
    }

    /// The cached pins to merge with, or why the store must not be published at all.
    /// `keepingCopy`: copy a corrupt file aside; only under the store's lock (readers, the loop and
    /// dry runs write nothing).
    func loadCache(_ store: StoreConfig, now: Int64, keepingCopy: Bool = false) -> (CacheFile?, UpdateFailure?) {
        switch cache.load(store: store.id, now: now, keepingCopy: keepingCopy) {
        case .missing: return (nil, nil)
        case .valid(let file): return (file, nil)
        case .corrupt(let reason, let copy):
            // It stays in place until a verified update replaces it: readers keep their last good pins.
            logger.warning(
                "cache file cannot be used; updating the store as if it had no cached pins",
                metadata: [
                    "store": "\(store.id)", "file": "\(cache.filePath(for: store.id))", "reason": "\(reason)",
                    "copy": "\(copy ?? "(none kept)")",
                ])
            return (nil, nil)
        case .newerFormat(let format):
            return (
                nil,
                UpdateFailure(
                    .writeFailed,
                    """
                    \(cache.filePath(for: store.id)) has cache format \(format), newer than this pinkeeper's \
                    \(CacheFile.formatVersion); it is left untouched so that a downgrade cannot destroy it \
                    (upgrade pinkeeper, or remove the file to start afresh)
                    """)
            )
        }
    }
}
