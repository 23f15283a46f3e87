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
    /// comes first waits on the same lock; a failure is left for the fetch to report.
    static func preload() {
        BlockingWork.start(named: "pinkeeper-curl") {
            if use() == nil { done() }
        }
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
