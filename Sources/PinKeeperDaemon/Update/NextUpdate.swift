import PinKeeper

/// When to fetch a store again after a successful update (PROTOCOL.md §4.4 and §6).
public enum NextUpdate {
    /// Wultra's schedule. `pins` must be in `Pin.publishedOrder` and unexpired at `now`:
    /// only the first (latest-expiring) entry of each common name counts, because once a
    /// replacement exists the older certificate's expiry no longer matters.
    public static func interval(pins: [Pin], now: Int64, policy: UpdatePolicy) -> Int64 {
        var nextExpiry = now + 10 * 365 * 86_400
        var seen: Set<String> = []
        for pin in pins where seen.insert(pin.name).inserted {
            nextExpiry = min(nextExpiry, pin.expires)
        }
        var interval = Double(nextExpiry - now)
        if interval > 0 && interval < Double(policy.expirationUpdateThreshold) {
            interval *= 0.125
        } else if interval <= 0 {
            interval = 0
        }
        return min(Int64(interval.rounded()), policy.periodicUpdateInterval)
    }

    /// The interval minus a random splay of up to 10 %, so a fleet started in the same second
    /// spreads its requests; the splay only ever makes the update earlier. Never sooner than
    /// `retry_min`, so a pin expiring in seconds cannot turn the schedule into a busy loop.
    public static func scheduled(pins: [Pin], now: Int64, policy: UpdatePolicy, random: RandomSource) -> Int64 {
        let base = interval(pins: pins, now: now, policy: policy)
        let floor = min(policy.retryMin, policy.periodicUpdateInterval)
        return now + max(base - random.uniform(upTo: base / 10), floor)
    }
}
