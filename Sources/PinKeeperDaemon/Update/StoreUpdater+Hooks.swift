import PinKeeper

extension StoreUpdater {
    /// After a publish: runs the store's hook when the valid pins differ from those published
    /// before. A 304, an identical list or a list of only expired entries changes nothing.
    func announceChange(_ store: StoreConfig, before: [Pin], after: [Pin]) {
        guard let hooks, store.policy.onChange != nil,
            Set(before.map(\.identity)) != Set(after.map(\.identity))
        else { return }
        hooks.pinsChanged(store, cacheFile: cache.filePath(for: store.id), pins: after.count)
    }

    /// After a publish: the store's Envoy secrets follow the new file (off the pool: file work).
    func syncEnvoySecrets(_ store: StoreConfig, now: Int64) async {
        guard let envoy else { return }
        _ = await BlockingWork.run { envoy.sync(store, now: now) }
    }
}
