import Foundation

/// Runs blocking work (file work with its fsyncs, a TLS handshake, waiting for a hook) on a thread
/// of its own and resumes the awaiting task when it returns. Swift's cooperative pool has one
/// thread per core: a few updates stuck in fsync on a stalled disk would hold all of them and
/// stop the scheduling loop, and with it the watchdog pings. A thread per call, because only a
/// bounded few ever wait at once (one per store of a pass or probe, plus the metrics file).
enum BlockingWork {
    static func run<T: Sendable, E: Error>(named name: String = "pinkeeper-file",
                                           _ work: @escaping @Sendable () throws(E) -> T) async throws(E) -> T {
        let result: Result<T, E> = await withCheckedContinuation { continuation in
            start(named: name) { continuation.resume(returning: Result { () throws(E) in try work() }) }
        }
        return try result.get()
    }

    /// Starts `work` on a new thread and does not wait for it.
    static func start(named name: String = "pinkeeper-file", _ work: @escaping @Sendable () -> Void) {
        let thread = Thread {
            nameCurrentThread(name)
            work()
        }
        thread.name = name
        thread.start()
    }

    /// The kernel's name (`top -H`, /proc/PID/task/TID/comm; at most 15 bytes are kept), which
    /// Foundation's `Thread.name` does not set on Linux: a new thread would show its creator's.
    private static func nameCurrentThread(_ name: String) {
        let fd = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else { return }
        _ = name.utf8CString.withUnsafeBytes { write(fd, $0.baseAddress, min($0.count - 1, 15)) }
        close(fd)
    }
}
