import CCurl
import Synchronization

/// Whether libcurl is mapped, and who needs it: each fetch while it waits for its transfer, and
/// each `CurlDriver` thread while it holds a multi handle. `unloadIfUnused` releases libcurl and
/// its ~30 libraries (some 5 MiB of an idle daemon's memory) only when nobody does, under the
/// same lock as `use`, so no thread can be in libcurl or about to enter it when it goes.
enum CurlLibrary {
    private static let users = Mutex(0)

    /// Loads libcurl if needed and counts one user until `done`; why it cannot be loaded otherwise.
    static func use() -> String? {
        users.withLock { users in
            if let failure = pk_curl_load() { return String(cString: failure) }
            users += 1
            return nil
        }
    }

    /// Loads libcurl on a thread of its own, so that its ~30 libraries are mapped and relocated
    /// while the caller reads caches (about 6 ms of a 35 ms `pinkeeper update`). A fetch that
    /// comes first waits on the same lock; a failure is left for the fetch to report, and so is
    /// a thread that cannot be started. The caller must `awaitPreload` before the process exits:
    /// exiting while the thread is in curl_global_init (OpenSSL's initialisation) crashes it.
    static func preload() {
        preloads.withLock { $0.running += 1 }
        let started = BlockingWork.startIfPossible(named: "pinkeeper-curl") {
            if use() == nil { done() }
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

    /// Ends one `use`.
    static func done() {
        users.withLock { $0 -= 1 }
    }

    /// Unloads libcurl when no fetch, driver thread or handle needs it; the next `use` loads it
    /// again. nil once it is unloaded, else why it stays (it will go at a later call).
    @discardableResult
    static func unloadIfUnused() -> String? {
        users.withLock { users in
            guard users == 0 else { return "libcurl is in use (\(users))" }
            return pk_curl_unload().map { String(cString: $0) }
        }
    }
}
