import CSystemd
import Glibc

/// Where the daemon reports its state: systemd's notify socket in production, a recorder in tests.
public protocol ServiceNotifier: Sendable {
    func notify(_ message: String)
    /// The watchdog period in microseconds, when systemd asked for pings (and they are ours to send).
    var watchdogMicroseconds: UInt64? { get }
}

/// sd_notify through libsystemd: a no-op unless `$NOTIFY_SOCKET` is set.
public struct SystemdNotifier: ServiceNotifier {
    public init() {}

    public func notify(_ message: String) { _ = sd_notify(0, message) }

    public var watchdogMicroseconds: UInt64? {
        var usec: UInt64 = 0
        // sd_watchdog_enabled checks $WATCHDOG_PID against our pid, so a forked helper never pings.
        return sd_watchdog_enabled(0, &usec) > 0 && usec > 0 ? usec : nil
    }

    /// `MONOTONIC_USEC=` for RELOADING=1, from CLOCK_MONOTONIC as systemd expects.
    public static func monotonicMicroseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * 1_000_000 + UInt64(now.tv_nsec) / 1_000
    }
}
