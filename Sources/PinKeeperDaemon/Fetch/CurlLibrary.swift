import CCurl
import Synchronization

/// libcurl for the process: loaded by the first fetch (or `preload`), so that commands that never
/// fetch never map it and its ~30 libraries, and kept from then on. A daemon that unloaded it
/// after each pass would save a few MiB of clean file pages, shared with other processes, at the
/// price of tearing down and setting up a TLS stack thousands of times over months.
enum CurlLibrary {
    /// Loads libcurl unless it is loaded already; why it cannot be loaded otherwise.
    static func load() -> String? {
        pk_curl_load().map { String(cString: $0) }
    }

    /// Loads libcurl on a thread of its own, so that its ~30 libraries are mapped and relocated
    /// while the caller reads caches (about 6 ms of a 35 ms `pinkeeper update`). A fetch that
    /// comes first waits on the same lock; a failure is left for the fetch to report, and so is
    /// a thread that cannot be started. The caller must `awaitPreload` before the process exits:
    /// exiting while the thread is in curl_global_init (OpenSSL's initialisation) crashes it.
    static func preload() {
        preloads.withLock { $0.running += 1 }
        let started = BlockingWork.startIfPossible(named: "pinkeeper-curl") {
            _ = load()
            preloaded()
        }
        if !started { preloaded() }
    }

    /// Returns once no `preload` is running.
    static func awaitPreload() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let running = preloads.withLock { state -> Bool in
                guard state.running > 0 else { return false }
                state.waiters.append(continuation)
                return true
            }
            if !running { continuation.resume() }
        }
    }

    private struct Preloads: ~Copyable {
        var running = 0
        var waiters: [CheckedContinuation<Void, Never>] = []
    }
    private static let preloads = Mutex(Preloads())

    private static func preloaded() {
        let waiters = preloads.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.running -= 1
            guard state.running == 0 else { return [] }
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }
}
