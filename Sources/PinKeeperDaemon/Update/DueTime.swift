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
}
