import Glibc

/// Runs blocking work (file work with its fsyncs, a TLS handshake, waiting for a hook) on a thread
/// of its own and resumes the awaiting task when it returns. Swift's cooperative pool has one
/// thread per core: a few updates stuck in fsync on a stalled disk would hold all of them and
/// stop the scheduling loop, and with it the watchdog pings. A thread per call, because only a
/// bounded few ever wait at once (one per store of a pass or probe, plus the metrics file).
enum BlockingWork {
    static func run<T: Sendable, E: Error>(
        named name: String = "pinkeeper-file",
        _ work: @escaping @Sendable () throws(E) -> T
    ) async throws(E) -> T {
        let result: Result<T, E> = await withCheckedContinuation { continuation in
            start(named: name) { continuation.resume(returning: Result { () throws(E) in try work() }) }
        }
        return try result.get()
    }

    /// Starts `work` on a new detached thread and does not wait for it. Without a thread nothing
    /// the caller waits for would ever happen, so failing to start one ends the process with
    /// one line and EX_OSERR (71), which systemd restarts.
    static func start(named name: String = "pinkeeper-file", _ work: @escaping @Sendable () -> Void) {
        let status = spawn(Work(name: name, body: work))
        guard status == 0 else {
            StandardError.write(
                "pinkeeper: cannot start thread \(name): \(String(cString: strerror(status)))"
                    + "; check the task limit (TasksMax=, ulimit -u)\n"
            )
            exit(71)
        }
    }

    /// Starts `work` on a new detached thread if one can be made; false (and nothing run) if not,
    /// for work that is only an optimisation.
    static func startIfPossible(named name: String, _ work: @escaping @Sendable () -> Void) -> Bool {
        spawn(Work(name: name, body: work)) == 0
    }

    private final class Work: Sendable {
        let name: String
        let body: @Sendable () -> Void
        init(name: String, body: @escaping @Sendable () -> Void) { (self.name, self.body) = (name, body) }
    }

    /// pthread_create with a detached thread that names itself, then runs `work`; 0 or an errno.
    private static func spawn(_ work: Work) -> Int32 {
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
        let context = Unmanaged.passRetained(work)
        var thread = pthread_t()
        let status = pthread_create(&thread, &attributes, threadMain, context.toOpaque())
        if status != 0 { context.release() }
        return status
    }

    private static let threadMain: @convention(c) (UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? = { context in
        let work = Unmanaged<Work>.fromOpaque(context!).takeRetainedValue()
        nameCurrentThread(work.name)
        work.body()
        return nil
    }

    /// The kernel's name (`top -H`, /proc/PID/task/TID/comm; at most 15 bytes are kept):
    /// a new thread would otherwise show its creator's.
    private static func nameCurrentThread(_ name: String) {
        let fd = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else { return }
        _ = name.utf8CString.withUnsafeBytes { write(fd, $0.baseAddress, min($0.count - 1, 15)) }
        close(fd)
    }
}
