import Glibc

/// A pthread mutex and condition variable (on the heap: neither may move). Waits have no
/// deadline: they sleep in the kernel until signalled, so an idle thread never wakes up.
final class ConditionLock: @unchecked Sendable {  // pthread objects are made for use from many threads
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)

    init() {
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(condition, nil)
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

    func signal() { pthread_cond_signal(condition) }
    func broadcast() { pthread_cond_broadcast(condition) }
}
