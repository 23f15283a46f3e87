/// When to retry a store whose update failed (docs/protocol.md §4): `retry_min` doubling per
/// consecutive failure up to `retry_max`, with "equal jitter" (the upper half of the step is
/// random) so failing hosts do not retry in lock-step.
public enum Backoff {
    /// - Parameters:
    ///   - failures: consecutive failures including this one (>= 1).
    ///   - retryAfter: the server's `Retry-After`, in seconds from now, if any; honoured up to `retry_max`.
    ///   - regularUpdate: the next update the schedule already planned, if it is still ahead;
    ///     a retry is never later than that.
    public static func retryAt(
        now: Int64, failures: Int, policy: UpdatePolicy, retryAfter: Int64? = nil,
        regularUpdate: Int64? = nil, random: any RandomSource
    ) -> Int64 {
        let exponent = failures <= 1 ? 0 : min(failures - 1, 40)  // a state file may hold any count
        var step = policy.retryMin
        for _ in 0..<exponent where step < policy.retryMax { step = step.saturatingMultiplied(by: 2) }
        step = min(step, policy.retryMax)
        var delay = max(policy.retryMin, step - random.uniform(upTo: step / 2))
        if let retryAfter, retryAfter > delay { delay = min(retryAfter, policy.retryMax) }
        var at = now.saturatingAdding(delay)
        if let regularUpdate, regularUpdate > now { at = min(at, regularUpdate) }
        return at
    }
}
