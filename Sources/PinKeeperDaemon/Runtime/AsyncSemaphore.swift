import Synchronization

/// At most `permits` holders at a time, for tasks: a task waits without holding a thread, the
/// longest-waiting task gets the next free permit, and a cancelled task stops waiting at once.
final class AsyncSemaphore: Sendable {
    private struct Waiter {
        var id: UInt64
        var continuation: CheckedContinuation<Bool, Never>
    }

    private struct State {
        var available: Int
        var waiters: [Waiter] = []
        var nextID: UInt64 = 0
    }

    private let state: Mutex<State>

    init(permits: Int) { state = Mutex(State(available: max(1, permits))) }

    /// True once the caller holds a permit (it must `release` it); false if the task was
    /// cancelled before it got one.
    func acquire() async -> Bool {
        let id = state.withLock { state in
            defer { state.nextID += 1 }
            return state.nextID
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let granted: Bool? = state.withLock { state in
                    // Cancellation sets the flag before its handler runs: checked under the lock,
                    // a waiter is either never queued or found by the handler.
                    if Task.isCancelled { return false }
                    if state.available > 0 {
                        state.available -= 1
                        return true
                    }
                    state.waiters.append(Waiter(id: id, continuation: continuation))
                    return nil
                }
                if let granted { continuation.resume(returning: granted) }
            }
        } onCancel: {
            let waiter = state.withLock { state -> Waiter? in
                guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
                return state.waiters.remove(at: index)
            }
            waiter?.continuation.resume(returning: false)
        }
    }

    /// Hands the permit to the longest-waiting task, or returns it.
    func release() {
        let next = state.withLock { state -> Waiter? in
            if state.waiters.isEmpty {
                state.available += 1
                return nil
            }
            return state.waiters.removeFirst()
        }
        next?.continuation.resume(returning: true)
    }
}
