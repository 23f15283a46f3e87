import FoundationEssentials

/// The daemon's own threads for Swift concurrency, one per active core. The default executor
/// on Linux is libdispatch's global queues, and the first job that reaches them starts a 1 s
/// repeating timer in libdispatch that never stops: an idle daemon would wake every second.
/// These threads sleep on a condition variable without a deadline while there is no job.
/// Tasks run here when created with `Task(executorPreference:)` or inside
/// `withTaskExecutorPreference`; their task group children follow, unstructured `Task {}` do not.
public final class ThreadPoolExecutor: TaskExecutor, @unchecked Sendable {  // `jobs`/`head` only under `lock`
    /// The pool the `pinkeeper` command runs on, started on first use.
    public static let shared = ThreadPoolExecutor(threads: ProcessInfo.processInfo.activeProcessorCount)

    private let lock = ConditionLock()
    private var jobs: [UnownedJob] = []  // guarded by `lock`
    private var head = 0  // first job not yet taken

    /// Starts `threads` threads that live as long as the process.
    public init(threads: Int, name: String = "pinkeeper-pool") {
        for _ in 0..<max(1, threads) {
            BlockingWork.start(named: name) { [self] in work() }
        }
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        lock.withLock { jobs.append(job) }
        lock.signal()
    }

    private func work() {
        let executor = asUnownedTaskExecutor()
        while true {
            let job = lock.withLock {
                while head == jobs.count { lock.wait() }
                defer {
                    head += 1
                    if head == jobs.count {  // drained: reuse the storage from the start
                        jobs.removeAll(keepingCapacity: true)
                        head = 0
                    }
                }
                return jobs[head]
            }
            job.runSynchronously(on: executor)
        }
    }
}

extension ThreadPoolExecutor {
    /// Runs `operation` as a task on this pool and blocks the calling thread until it ends:
    /// the synchronous `main` of `pinkeeper` uses it instead of an async `main`, which would
    /// hand the main thread to libdispatch (`dispatch_main`).
    public func runBlocking<T: Sendable>(_ operation: sending @escaping () async throws -> T) throws -> T {
        let outcome = Outcome<T>()
        Task(executorPreference: self) {
            let result: Result<T, any Error>
            do { result = .success(try await operation()) } catch { result = .failure(error) }
            outcome.lock.withLock { outcome.result = result }
            outcome.lock.signal()
        }
        return try outcome.lock.withLock {
            while outcome.result == nil { outcome.lock.wait() }
            return outcome.result!
        }.get()
    }

    private final class Outcome<T>: @unchecked Sendable {  // `result` only under `lock`
        let lock = ConditionLock()
        var result: Result<T, any Error>?  // guarded by `lock`
    }
}
