import Glibc

/// CLOCK_BOOTTIME in nanoseconds: like CLOCK_MONOTONIC it ignores wall-clock changes, but it
/// keeps counting while the machine is suspended, as `ContinuousClock` does on Linux. A sleep of
/// ten minutes therefore ends ten minutes later, however much of that the machine slept.
enum BootTime {
    static var now: Int64 {
        var time = timespec()
        clock_gettime(CLOCK_BOOTTIME, &time)
        return Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec)
    }

    /// `now + duration`, saturating (a sleep of `.seconds(Int64.max)` must not overflow).
    static func after(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        guard seconds > 0 || attoseconds > 0 else { return now }
        let limit: Int64 = 100 * 365 * 86_400  // a century is "never" for a daemon
        return now + min(seconds, limit) * 1_000_000_000 + attoseconds / 1_000_000_000
    }
}
