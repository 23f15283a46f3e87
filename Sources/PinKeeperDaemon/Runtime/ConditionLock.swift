import Glibc

/// A pthread mutex and condition variable (on the heap: neither may move). Waits without a
/// deadline sleep in the kernel until signalled, so an idle thread never wakes up.
final class ConditionLock: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)

    init() {
        pthread_mutex_init(mutex, nil)
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)  // deadlines must not follow the wall clock
        pthread_cond_init(condition, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    func withLock<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body()
    }

    /// Only with the lock held (inside `withLock`).
    func wait() { pthread_cond_wait(condition, mutex) }

    /// Only with the lock held; returns at the latest at `deadline` (`MonotonicTime.now` nanoseconds).
    func wait(until deadline: Int64) {
        var time = timespec(tv_sec: Int(deadline / 1_000_000_000), tv_nsec: Int(deadline % 1_000_000_000))
        pthread_cond_timedwait(condition, mutex, &time)
    }

    func signal() { pthread_cond_signal(condition) }
    func broadcast() { pthread_cond_broadcast(condition) }
}

/// CLOCK_MONOTONIC in nanoseconds, the clock `ConditionLock.wait(until:)` counts in.
enum MonotonicTime {
    static var now: Int64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
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
