import Glibc

/// Unix seconds as ISO 8601 UTC (`2026-11-29T02:00:00Z`) for logs and command output.
/// Plain gmtime_r: Foundation's date formatters pull megabytes of ICU data into a daemon
/// that logs a timestamp with every update.
public enum Timestamp {
    public static func iso(_ seconds: Int64) -> String {
        var time = time_t(seconds)
        var parts = tm()
        guard gmtime_r(&time, &parts) != nil else { return "\(seconds)" }
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        // In Int64: gmtime_r accepts times whose tm_year + 1900 overflows Int32.
        return "\(Int64(parts.tm_year) + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))T"
            + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec))Z"
    }

    /// Unix milliseconds as RFC 3339 UTC with milliseconds (`2026-11-29T02:00:00.250Z`), for log lines.
    public static func iso(milliseconds: Int64) -> String {
        let (seconds, remainder) = milliseconds.quotientAndRemainder(dividingBy: 1000)
        // Before 1970 the remainder is negative: borrow a second so the fraction counts up from it.
        let (whole, fraction) = remainder < 0 ? (seconds - 1, remainder + 1000) : (seconds, remainder)
        let digits = String(fraction)
        return String(iso(whole).dropLast()) + "." + String(repeating: "0", count: 3 - digits.count) + digits + "Z"
    }

    /// The wall clock now, in Unix milliseconds.
    public static func nowMilliseconds() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Int64(now.tv_sec) * 1000 + Int64(now.tv_nsec) / 1_000_000
    }
}
