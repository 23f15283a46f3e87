/// `Task.sleep` without libdispatch: `Task.sleep` is a `dispatch_after` on a global queue, which
/// starts libdispatch's never-ending 1 s timer (see `ThreadPoolExecutor`). One timer thread waits
/// for the earliest deadline, or without a deadline while nobody sleeps, and resumes the sleeper
/// on the sleeper's own executor. Time is CLOCK_MONOTONIC: a system suspend does not count.
public enum ThreadSleep {
    /// Returns after `duration`, or throws `CancellationError` at once when the task is cancelled.
    public static func sleep(for duration: Duration) async throws {
        try await TimerThread.shared.sleep(until: MonotonicTime.after(duration))
    }
}

private final class TimerThread: @unchecked Sendable {
    static let shared = TimerThread()

    private struct Sleeper {
        var deadline: Int64
        var continuation: UnsafeContinuation<Void, any Error>
    }
    private let lock = ConditionLock()
    // All guarded by `lock`.
    private var sleepers: [UInt64: Sleeper] = [:]
    private var cancelledEarly: Set<UInt64> = []  // cancelled before their continuation arrived
    private var nextID: UInt64 = 0

    private init() {
        BlockingWork.start(named: "pinkeeper-timer") { [self] in run() }
    }

    func sleep(until deadline: Int64) async throws {
        let id = lock.withLock { nextID += 1; return nextID }
        // After the handler's scope no cancellation can arrive; one that came too late is forgotten.
        defer { lock.withLock { _ = cancelledEarly.remove(id) } }
        try await withTaskCancellationHandler {
            try await withUnsafeThrowingContinuation { continuation in
                let cancelled = lock.withLock {
                    if cancelledEarly.remove(id) != nil { return true }
                    sleepers[id] = Sleeper(deadline: deadline, continuation: continuation)
                    return false
                }
                if cancelled { continuation.resume(throwing: CancellationError()) } else { lock.signal() }
            }
        } onCancel: {
            let sleeper = lock.withLock {
                guard let sleeper = sleepers.removeValue(forKey: id) else {
                    cancelledEarly.insert(id)
                    return nil as Sleeper?
                }
                return sleeper
            }
            sleeper?.continuation.resume(throwing: CancellationError())
        }
    }

    private func run() {
        while true {
            let due = lock.withLock { () -> [Sleeper] in
                while true {
                    guard let earliest = sleepers.values.lazy.map(\.deadline).min() else {
                        lock.wait()
                        continue
                    }
                    let now = MonotonicTime.now
                    guard earliest <= now else {
                        lock.wait(until: earliest)
                        continue
                    }
                    let due = sleepers.filter { $0.value.deadline <= now }
                    for id in due.keys { sleepers[id] = nil }
                    return due.values.sorted { $0.deadline < $1.deadline }
                }
            }
            for sleeper in due { sleeper.continuation.resume() }
        }
    }
}
