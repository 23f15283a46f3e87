import Glibc

/// `<state_directory>/<store>.lock`, held with `flock` by whichever process is updating the
/// store, so that the daemon and a manual `pinkeeper update` never update it at the same time.
/// The kernel drops the lock when its holder exits, however it exits.
struct StoreLock: Sendable {
    enum Failure: Error {
        /// Another process kept the lock for the whole wait.
        case busy
        /// The lock file cannot be opened or locked.
        case unavailable(FileError)
    }

    private let fd: Int32

    static func path(store: String, in directory: String) -> String { "\(directory)/\(fileName(store: store))" }
    static func fileName(store: String) -> String { StoreFiles.lock(store) }

    /// Takes the lock, polling without blocking: a thread of Swift's cooperative pool must
    /// never sleep in `flock`, and a cancelled task stops waiting at once.
    static func acquire(store: String, in directory: String, waiting limit: Duration) async -> Result<StoreLock, Failure> {
        let path = path(store: store, in: directory)
        // Read-only is enough for flock, so a lock file left by root's manual update still
        // opens for the service user. O_NONBLOCK: a FIFO planted here must not hang us.
        let fd = open(path, O_RDONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0o644)
        guard fd >= 0 else {
            return .failure(.unavailable(FileError(errno == ELOOP ? "refusing to follow a symlink at" : "cannot open the lock file", path)))
        }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
            close(fd)
            return .failure(.unavailable(FileError("refusing a lock file that is not a regular file at", path, code: EINVAL)))
        }
        let deadline = ContinuousClock.now + limit
        while true {
            if flock(fd, LOCK_EX | LOCK_NB) == 0 { return .success(StoreLock(fd: fd)) }
            let code = errno
            guard code == EWOULDBLOCK || code == EINTR else {
                close(fd)
                return .failure(.unavailable(FileError("cannot lock", path, code: code)))
            }
            guard ContinuousClock.now < deadline, (try? await ThreadSleep.sleep(for: .milliseconds(50))) != nil else {
                close(fd)
                return .failure(.busy)
            }
        }
    }

    /// Closing the descriptor releases the lock.
    func release() { close(fd) }
}
