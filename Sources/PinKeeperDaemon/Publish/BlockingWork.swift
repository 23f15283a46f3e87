import Foundation

/// Runs blocking file work (open, read and parse, directory listings, fsync, rename) on a thread
/// of its own and resumes the awaiting task when it returns. Swift's cooperative pool has one
/// thread per core: a few updates stuck in fsync on a stalled disk would hold all of them and
/// stop the scheduling loop, and with it the watchdog pings. A thread per call, as for curl
/// transfers, because no more than one per store of a pass (plus the metrics file) ever waits.
enum BlockingWork {
    static func run<T: Sendable, E: Error>(_ work: @escaping @Sendable () throws(E) -> T) async throws(E) -> T {
        let result: Result<T, E> = await withCheckedContinuation { continuation in
            start { continuation.resume(returning: Result { () throws(E) in try work() }) }
        }
        return try result.get()
    }

    /// Starts `work` on a new thread and does not wait for it.
    static func start(_ work: @escaping @Sendable () -> Void) {
        let thread = Thread(block: work)
        thread.name = "pinkeeper-file"
        thread.start()
    }
}
