import Glibc

/// The cache and state directories, made ready before `run` or `update` touches a store:
/// created with their parents (0755) when missing, so the daemon works outside systemd too,
/// and checked so that a problem is one clear error at start instead of a failure per store.
public enum DataDirectories {
    public struct Problem: Error, CustomStringConvertible, Equatable {
        /// The configuration key naming the directory (`cache_directory`, `state_directory`, ...),
        /// or `private_volumes` for a listed volume that is none.
        public var key: String
        public var description: String

        /// A listed private volume that is not one: the configuration is wrong, not the disk.
        public var isConfigurationError: Bool { key == PrivateVolumesKey.key }
    }

    public static func prepare(_ configuration: Configuration) throws(Problem) {
        let volumes = try PrivateVolumes.verify(configuration.privateVolumes)
        try prepare(configuration.cacheDirectory, key: "cache_directory", role: "cache directory", volumes: volumes)
        try prepare(configuration.stateDirectory, key: "state_directory", role: "state directory", volumes: volumes)
        if let envoy = configuration.envoySDSDirectory {
            try prepare(envoy, key: "envoy_sds_directory", role: "Envoy secret directory", volumes: volumes)
        }
        // The metrics file's directory is the operator's (node_exporter's) elsewhere; inside a
        // private volume, whose own directory MetricsFile.writer refuses, pinkeeper makes its own.
        if let metrics = configuration.metricsFile, volumes.holds(PrivateVolumesKey.parent(of: metrics)) {
            try prepare(PrivateVolumesKey.parent(of: metrics), key: "metrics_file", role: "metrics directory", volumes: volumes)
        }
    }

    static func prepare(_ path: String, key: String, role: String, volumes: PrivateVolumes = PrivateVolumes()) throws(Problem) {
        func problem(_ text: String) -> Problem { Problem(key: key, description: "the \(role) \(path) \(text)") }
        if let failure = createWithParents(path) {
            throw problem("cannot be created: \(failure.description)")
        }
        var info = stat()
        guard stat(path, &info) == 0 else { throw problem("cannot be examined: \(errorText(errno))") }
        guard info.st_mode & S_IFMT == S_IFDIR else { throw problem("is not a directory") }
        if volumes.isVolume(path) {
            throw problem(
                "is refused: it is a private volume itself (private_volumes); name a directory inside it, which pinkeeper creates")
        }
        if let owner = AtomicWriter.foreignOwner(info.st_uid) {
            throw problem(
                "is refused: it is owned by \(owner), who could replace the files in it"
                    + " (\(ownershipFix), or remove it and let pinkeeper create it)"
            )
        }
        let mode = "mode 0" + String(info.st_mode & 0o7777, radix: 8)
        // Root may use root's and the service user's directories as they are (`foreignOwner`).
        let ours = info.st_uid == geteuid() || geteuid() == 0
        // access(2) also answers EROFS for a read-only file system, even for root.
        guard access(path, W_OK | X_OK) == 0 else {
            let code = errno
            guard !ours, code == EACCES else { throw problem("is not writable: \(errorText(code))") }
            throw problem(
                "is not writable by \(user(geteuid())), which pinkeeper runs as: it is \(user(info.st_uid))'s, \(mode) (\(ownershipFix))")
        }
        if let writers = AtomicWriter.unsafeWriters(info.st_mode & (S_IWGRP | S_IWOTH)) {
            guard !ours else { throw problem("is refused: it is \(writers)") }
            // chmod alone would leave it root's and unwritable: the owner is what must change.
            throw problem("is refused: it is \(user(info.st_uid))'s, \(mode), so others could replace the files in it (\(ownershipFix))")
        }
        if let parent = othersWritableAncestor(of: path, except: volumes) {
            throw problem(
                "is refused: its ancestor \(parent) is writable by other users without the sticky bit, "
                    + "so they could replace the directory (chmod o-w or +t \(parent); or, if it is a volume "
                    + "that only this pod mounts, such as a Kubernetes emptyDir, list it in private_volumes)")
        }
    }

    /// The first directory above `path`, along the path as written and along its resolved form,
    /// that anyone may write without the sticky bit: whoever can rename entries there can swap
    /// our directory for one of theirs. Group write is allowed, as on the usual root-owned trees.
    /// A verified private volume is skipped: only this pod's containers reach it.
    static func othersWritableAncestor(of path: String, except volumes: PrivateVolumes = PrivateVolumes()) -> String? {
        let paths = [path] + (realPath(path).map { [$0] } ?? [])
        for candidate in paths where candidate.unicodeScalars.first == "/" {
            var prefix = ""
            for ancestor in ["/"]
                + components(of: candidate).dropLast().map({ component in
                    prefix += "/\(component)"
                    return prefix
                })
            {
                var info = stat()
                guard !volumes.contains(ancestor), stat(ancestor, &info) == 0 else { continue }
                if info.st_mode & S_IWOTH != 0 && info.st_mode & S_ISVTX == 0 { return ancestor }
            }
        }
        return nil
    }

    /// What to do about a directory that is not pinkeeper's own, where it usually happens: a
    /// container's volume (an emptyDir is root's, mode 0777; a new hostPath root's, 0755).
    static var ownershipFix: String {
        "chown it to \(user(geteuid())) and chmod it 0755 before pinkeeper starts; "
            + "in a container, with an init container that runs chown and chmod, or podman's :U on a bind mount"
    }

    /// `uid 4242`, or `uid 998 (pinkeeper)` when the user database names it.
    static func user(_ uid: uid_t) -> String {
        var entry = passwd(), result: UnsafeMutablePointer<passwd>?
        var buffer = [CChar](repeating: 0, count: 4096)
        guard getpwuid_r(uid, &entry, &buffer, buffer.count, &result) == 0, let name = result?.pointee.pw_name else { return "uid \(uid)" }
        return "uid \(uid) (\(String(cString: name)))"
    }

    /// `mkdir -p` with mode 0755 whatever the umask, for the directories it creates; nil on success.
    static func createWithParents(_ path: String) -> FileError? {
        var prefix = path.unicodeScalars.first == "/" ? "" : "."
        for component in components(of: path) {
            prefix += "/\(component)"
            if component == "." || component == ".." { continue }
            if mkdir(prefix, 0o755) == 0 {
                // fchmod through a descriptor of the directory itself: between mkdir and a chmod
                // by path, someone could put a symlink there and have us chmod its target.
                let fd = open(prefix, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
                guard fd >= 0 else { return FileError("cannot open", prefix) }
                defer { close(fd) }
                guard fchmod(fd, 0o755) == 0 else { return FileError("cannot chmod", prefix) }
            } else if errno != EEXIST {
                return FileError("mkdir", prefix)
            }
        }
        return nil
    }

    /// The names between the slashes, split by Unicode scalars as the kernel splits by bytes: a
    /// name that starts with a combining mark joins the `/` before it into one Character, which a
    /// split by Character would miss (skipping the check of the directory above it).
    private static func components(of path: String) -> [Substring] {
        path.unicodeScalars.split(separator: "/").map(Substring.init)
    }

    private static func errorText(_ code: Int32) -> String { String(cString: strerror(code)) }
}
