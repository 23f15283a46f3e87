public import PinKeeper

/// When a store is next due, from what is on disk: the published file's `nextUpdate`, or the
/// retry time after a failure, or now when the store has no valid pin.
public enum DueTime {
    public static func of(cache: CacheFile?, state: StoreState, policy: UpdatePolicy, now: Int64) -> Int64 {
        let hasValidPins = cache?.list.pins.contains { !$0.isExpired(at: now) } ?? false
        // A due time further ahead than any schedule could set means the wall clock went
        // backwards (e.g. NTP at boot); never sleep for days because of that.
        let horizon = now.saturatingAdding(max(policy.periodicUpdateInterval, policy.retryMax))
        // retryAt: set after a failure, or after a success that left the published file as it was.
        if let retryAt = state.retryAt {
            return retryAt > horizon ? now : retryAt
        }
        guard hasValidPins, let next = cache?.metadata.nextUpdate else { return now }
        return next > horizon ? now : next
    }

    /// Why a store is due now although its schedule says later: the configuration changed what
    /// its published pins or its last fetch depended on. The url differs from the one the file
    /// was fetched from; another fetch setting differs from those the last fetch used
    /// (`FetchSettings`); `authoritative` was turned on and pins are cached that the service may
    /// no longer list. Nil when none did. `run` asks at start; `pinkeeper update` does not: it
    /// fetches due stores only (or all with `--force`), and reconciles a removed key's pins
    /// without a fetch.
    static func changeSinceLastUpdate(_ store: StoreConfig, cache: CacheFile?, state: StoreState, validPins: Int) -> String? {
        if let source = cache?.metadata.source, source != store.url {
            return "the store's url changed since its last update; updating it now"
        }
        if let change = FetchSettings.changeSinceLastFetch(store, recorded: state.fetchSettings) { return change }
        if store.policy.authoritative && state.authoritative != true && validPins > 0 {
            return "the store became authoritative since its last update; updating it now"
        }
        return nil
    }
}
