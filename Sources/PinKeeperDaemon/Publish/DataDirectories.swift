import Glibc

/// The cache and state directories, made ready before `run` or `update` touches a store:
/// created with their parents (0755) when missing, so the daemon works outside systemd too,
/// and checked so that a problem is one clear error at start instead of a failure per store.
public enum DataDirectories {
    public struct Problem: Error, CustomStringConvertible, Equatable {
        /// The configuration key naming the directory: `cache_directory` or `state_directory`.
        public var key: String
        public var description: String
    }

    public static func prepare(_ configuration: Configuration) throws(Problem) {
        try prepare(configuration.cacheDirectory, key: "cache_directory", role: "cache directory")
        try prepare(configuration.stateDirectory, key: "state_directory", role: "state directory")
    }

    static func prepare(_ path: String, key: String, role: String) throws(Problem) {
        func problem(_ text: String) -> Problem { Problem(key: key, description: "the \(role) \(path) \(text)") }
        if let failure = createWithParents(path) {
            throw problem("cannot be created: \(failure.description)")
        }
        var info = stat()
        guard stat(path, &info) == 0 else { throw problem("cannot be examined: \(errorText(errno))") }
        guard info.st_mode & S_IFMT == S_IFDIR else { throw problem("is not a directory") }
        // access(2) also answers EROFS for a read-only file system, even for root.
        guard access(path, W_OK | X_OK) == 0 else { throw problem("is not writable: \(errorText(errno))") }
        if let writers = AtomicWriter.unsafeWriters(info.st_mode & (S_IWGRP | S_IWOTH)) {
            throw problem("is refused: it is \(writers)")
        }
    }

    /// `mkdir -p` with mode 0755 whatever the umask, for the directories it creates; nil on success.
    private static func createWithParents(_ path: String) -> FileError? {
        var prefix = path.hasPrefix("/") ? "" : "."
        for component in path.split(separator: "/") {
            prefix += "/\(component)"
            if component == "." || component == ".." { continue }
            if mkdir(prefix, 0o755) == 0 {
                guard chmod(prefix, 0o755) == 0 else { return FileError("cannot chmod", prefix) }
            } else if errno != EEXIST {
                return FileError("mkdir", prefix)
            }
        }
        return nil
    }

    private static func errorText(_ code: Int32) -> String { String(cString: strerror(code)) }
}
