import Synchronization

/// `Task.sleep` without libdispatch: `Task.sleep` is a `dispatch_after` on a global queue, which
/// starts libdispatch's never-ending 1 s timer (see `ThreadPoolExecutor`). One timer thread waits
/// for the earliest deadline, or without a deadline while nobody sleeps, and resumes the sleeper
/// on the sleeper's own executor. Time is CLOCK_BOOTTIME (`BootTime`), as for `Task.sleep`: time
/// the machine spends suspended counts, so a sleep that ran out meanwhile ends right after resume.
public enum ThreadSleep {
    /// Returns after `duration`, or throws `CancellationError` at once when the task is cancelled.
    public static func sleep(for duration: Duration) async throws {
        try await TimerThread.shared.get().sleep(until: BootTime.after(duration))
    }

    /// Starts the timer thread, or says why it cannot run: `pinkeeper` calls this before any
    /// command, so that a later sleep never meets the error (a failed sleep would read as cancelled).
    public static func prepare() throws(RuntimeSetupError) {
        _ = try TimerThread.shared.get()
    }
}

final class TimerThread: Sendable {
    static let shared = Result { () throws(RuntimeSetupError) in try TimerThread(timer: BootTimer()) }

    private struct Sleeper {
        var deadline: Int64
        var continuation: UnsafeContinuation<Void, any Error>
    }
    private struct State {
        var sleepers: [UInt64: Sleeper] = [:]
        var cancelledEarly: Set<UInt64> = []  // cancelled before their continuation arrived
        var nextID: UInt64 = 0
        var armed: Int64?  // the deadline the timer is set to; nil while disarmed
    }
    private let state = Mutex(State())
    let timer: BootTimer

    private init(timer: BootTimer) {
        self.timer = timer
        BlockingWork.start(named: "pinkeeper-timer") { [self] in run() }
    }

    func sleep(until deadline: Int64) async throws {
        let id = state.withLock {
            $0.nextID += 1; return $0.nextID
        }
        // After the handler's scope no cancellation can arrive; one that came too late is forgotten.
        defer { state.withLock { _ = $0.cancelledEarly.remove(id) } }
        try await withTaskCancellationHandler {
            try await withUnsafeThrowingContinuation { continuation in
                let (cancelled, rearm) = state.withLock { state in
                    if state.cancelledEarly.remove(id) != nil { return (true, false) }
                    state.sleepers[id] = Sleeper(deadline: deadline, continuation: continuation)
                    return (false, state.armed.map { deadline < $0 } ?? true)
                }
                if cancelled { continuation.resume(throwing: CancellationError()) }
                if rearm { timer.wake() }
            }
        } onCancel: {
            let (sleeper, rearm) = state.withLock { state in
                guard let sleeper = state.sleepers.removeValue(forKey: id) else {
                    state.cancelledEarly.insert(id)
                    return (nil as Sleeper?, false)
                }
                return (sleeper, sleeper.deadline == state.armed)  // may be disarmed or set later now
            }
            sleeper?.continuation.resume(throwing: CancellationError())
            if rearm { timer.wake() }
        }
    }

    /// Arms the timer for the earliest deadline under the lock, so a sleeper registered after that
    /// sees `armed` and wakes the thread only when it must run earlier.
    private func run() {
        while true {
            let due = state.withLock { state -> [Sleeper] in
                let now = BootTime.now
                let due = state.sleepers.filter { $0.value.deadline <= now }
                for id in due.keys { state.sleepers[id] = nil }
                state.armed = state.sleepers.values.lazy.map(\.deadline).min()
                timer.arm(at: state.armed)
                return due.values.sorted { $0.deadline < $1.deadline }
            }
            for sleeper in due { sleeper.continuation.resume() }
            if due.isEmpty { timer.wait() }
        }
    }
}
