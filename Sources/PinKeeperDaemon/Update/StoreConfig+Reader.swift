public import PinKeeper

extension StoreConfig {
    /// A reader of this store's published pins for the daemon's own questions (`validate`, the
    /// probes): each version of the file is first reconciled with the current configuration as
    /// the next update would (`CachedPins`), so the pins of a key the operator removed stop
    /// deciding at once, even where `validate` runs from cron before `update` does.
    public func pinReader(cacheDirectory: String) throws(CacheReaderError) -> CacheReader {
        let store = self
        return try CacheReader(
            store: id, cacheDirectory: cacheDirectory, fallbackFile: fallbackFile,
            expectedCommonNames: expectedCommonNames,
            usable: { CachedPins.reconcile($0, store: store).file })
    }
}
