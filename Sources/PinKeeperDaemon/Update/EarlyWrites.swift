import Synchronization

/// The files `earlyPublication` started writing. `plan` waits for those it does not publish
/// (the list refused, or signed by another key): each is discarded once written, so nothing is
/// left behind once the store's lock goes. Discarded here, not left to the file's `deinit`: the
/// finished task still holds the file until the runtime lets the task go, which may be after
/// the update has returned and the lock is released.
final class EarlyWrites: Sendable {
    private let tasks = Mutex<[Task<AtomicWriter.PreparedFile?, Never>]>([])

    func started(_ task: Task<AtomicWriter.PreparedFile?, Never>) { tasks.withLock { $0.append(task) } }

    func settle() async {
        for task in tasks.withLock({ tasks in
            defer { tasks = [] }; return tasks
        }) { await task.value?.discard() }
    }
}
