public import PinKeeper

/// When to fetch a store again after a successful update (docs/protocol.md §4).
public enum NextUpdate {
    /// Wultra's schedule. `pins` must be unexpired at `now`: only the latest-expiring entry of
    /// each name counts, because once a replacement exists the older certificate's expiry no
    /// longer matters. Names are grouped as readers compare them (`PinName`).
    public static func interval(pins: [Pin], now: Int64, policy: UpdatePolicy) -> Int64 {
        interval(of: pins, now: now, policy: policy)
    }

    static func interval(of pins: some NamedExpiries, now: Int64, policy: UpdatePolicy) -> Int64 {
        let soonestLatest = LatestPins.indices(pins).lazy.map { pins.expiry(at: $0) }.min()
        let nextExpiry = min(now.saturatingAdding(10 * 365 * 86_400), soonestLatest ?? .max)
        var interval = Double(nextExpiry.saturatingSubtracting(now))
        if interval > 0 && interval < Double(policy.expirationUpdateThreshold) {
            interval *= 0.125
        } else if interval <= 0 {
            interval = 0
        }
        return min(Int64(interval.rounded()), policy.periodicUpdateInterval)
    }

    /// The interval minus a random splay, which only ever makes the update earlier: up to 10 %
    /// normally, so hosts keep their phase. After a catch-up update (first fetch, or long
    /// overdue) anywhere in one splayed period instead: hosts that catch up together — a fleet
    /// booted in the same second, or back from the same outage — would otherwise stay in
    /// lock-step for days (a 10 % splay spreads them only as the square root of the number of
    /// periods). Never sooner than `retry_min`, so a pin expiring in seconds cannot busy-loop.
    public static func scheduled(
        pins: [Pin], now: Int64, policy: UpdatePolicy, random: any RandomSource,
        catchingUp: Bool = false
    ) -> Int64 {
        scheduled(of: pins, now: now, policy: policy, random: random, catchingUp: catchingUp)
    }

    static func scheduled(
        of pins: some NamedExpiries, now: Int64, policy: UpdatePolicy, random: any RandomSource, catchingUp: Bool
    ) -> Int64 {
        let base = interval(of: pins, now: now, policy: policy)
        let floor = min(policy.retryMin, policy.periodicUpdateInterval)
        let regular = base - random.uniform(upTo: base / 10)
        return now.saturatingAdding(max(catchingUp ? regular - random.uniform(upTo: regular) : regular, floor))
    }

    /// Whether an update at `now` catches up: nothing valid was cached, or it comes later than
    /// `planned` (the published file's `nextUpdate`) by more than 10 % of the periodic interval.
    public static func isCatchUp(planned: Int64?, now: Int64, policy: UpdatePolicy) -> Bool {
        guard let planned else { return true }
        return now.saturatingSubtracting(planned) > policy.periodicUpdateInterval / 10
    }
}
