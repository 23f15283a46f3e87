import Glibc

/// Before root gives itself up for the service user (`ServiceUser`): creates the missing cache
/// and state directories (parents root's, 0755) and gives the service user the directories an
/// earlier run as root left as root's, with the files pinkeeper made in them (cache files, state
/// files, lock files, temporary files), so that it can keep using them and the files keep one
/// owner. Only what pinkeeper itself would have made changes hands: a root's directory holding
/// anything else (a `cache_directory` set to /etc by mistake) is refused, never chowned.
enum DirectoryHandover {
    /// Linux's values (the same on every architecture), which Swift's Glibc module lacks.
    private static let openPathOnly: Int32 = 0o10000000  // O_PATH
    private static let emptyPath: Int32 = 0x1000  // AT_EMPTY_PATH

    static func run(_ configuration: Configuration, to user: ConfiguredUser) throws(ServiceUser.Problem) {
        let directories = [
            (configuration.cacheDirectory, "cache directory"), (configuration.stateDirectory, "state directory"),
        ]
        for (path, role) in directories {
            if let failure = DataDirectories.createWithParents(path) {
                throw ServiceUser.Problem("the \(role) \(path) cannot be created: \(failure.description)")
            }
            let others = directories.map(\.0).filter { $0 != path }
            try handOver(path, role: role, to: user, besides: others)
        }
    }

    private static func handOver(_ path: String, role: String, to user: ConfiguredUser, besides others: [String]) throws(ServiceUser
        .Problem)
    {
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw ServiceUser.Problem("the \(role) \(path) cannot be opened: \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            throw ServiceUser.Problem("the \(role) \(path) cannot be examined: \(String(cString: strerror(errno)))")
        }
        switch info.st_uid {
        case user.uid:
            // The service user's already: only files an earlier run as root made in it change hands.
            giveRootsFiles(in: fd, to: user)
        case 0:
            guard info.st_mode & (S_IWGRP | S_IWOTH) == 0 else {
                throw ServiceUser.Problem(
                    "the \(role) \(path) is root's and writable by others, so it is not handed to \(user.described): chmod go-w it")
            }
            if let stranger = firstStranger(in: path, besides: others) {
                throw ServiceUser.Problem(
                    "the \(role) \(path) is root's and holds \(stranger), which pinkeeper did not make, so it is not handed to "
                        + "\(user.described): if the directory is pinkeeper's, chown it and its files to that user yourself")
            }
            // Only root could write in it: no entry can change between the listing and the chown.
            giveRootsFiles(in: fd, to: user)
            guard fchown(fd, user.uid, user.gid) == 0 else {
                throw ServiceUser.Problem("the \(role) \(path) cannot be given to \(user.described): \(String(cString: strerror(errno)))")
            }
        default:
            return  // someone else's: DataDirectories refuses it, as the service user, naming the owner
        }
    }

    /// Gives `user` the root's regular files with pinkeeper's names in the directory `fd`. Each
    /// is examined through a descriptor of its own, which cannot be swapped for another file, and
    /// skipped unless it has exactly one link: a hard link planted to a root's file elsewhere
    /// (/etc/shadow) in a directory the service user can write has two.
    private static func giveRootsFiles(in fd: Int32, to user: ConfiguredUser) {
        for name in entries(of: fd) where PinkeeperFileName.isOwn(name) {
            let file = openat(fd, name, openPathOnly | O_NOFOLLOW | O_CLOEXEC)
            guard file >= 0 else { continue }
            defer { close(file) }
            var info = stat()
            guard fstat(file, &info) == 0, info.st_mode & S_IFMT == S_IFREG, info.st_uid == 0 else { continue }
            guard info.st_nlink == 1 else { continue }
            _ = fchownat(file, "", user.uid, user.gid, emptyPath)
        }
    }

    /// The first entry of a root's directory that pinkeeper would not have made, or nil.
    private static func firstStranger(in path: String, besides others: [String]) -> String? {
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { return "entries that cannot be listed" }
        defer { close(fd) }
        for name in entries(of: fd) where !PinkeeperFileName.isOwn(name) {
            // The state directory may lie inside the cache directory, or the other way round.
            let inside = path.hasSuffix("/") ? path + name : path + "/" + name
            if others.contains(where: { $0 == inside || $0.hasPrefix(inside + "/") }) { continue }
            return "'\(name)'"
        }
        return nil
    }

    /// The names in the directory `fd`, without `.` and `..`.
    private static func entries(of fd: Int32) -> [String] {
        let copy = dup(fd)
        guard copy >= 0, let directory = fdopendir(copy) else { return [] }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }
}

/// The names pinkeeper gives its files (`StoreFiles`, corrupt copies, temporary files, a
/// metrics file kept beside them): `<id>.json`, `<id>.state.json`, `<id>.probes.json`,
/// `<id>.lock`, `<id>.json.corrupt-<time>`, `.<name>.tmp-<suffix>` and `<name>.prom`.
enum PinkeeperFileName {
    static func isOwn(_ name: String) -> Bool {
        var base = name
        if base.hasPrefix("."), let temp = position(of: ".tmp-", in: base) {
            base = String(base.unicodeScalars.dropFirst().prefix(temp - 1))
        }
        if let corrupt = position(of: ".corrupt-", in: base) {
            base = String(base.unicodeScalars.prefix(corrupt))
        }
        guard let suffix = [".json", ".lock", ".prom"].first(where: { base.hasSuffix($0) }) else { return false }
        let stem = Array(base.unicodeScalars.dropLast(suffix.unicodeScalars.count))
        guard let first = stem.first, isLetterOrDigit(first) else { return false }
        return stem.allSatisfy { isLetterOrDigit($0) || "._-".unicodeScalars.contains($0) }
    }

    private static func isLetterOrDigit(_ scalar: Unicode.Scalar) -> Bool {
        ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar) || ("0"..."9").contains(scalar)
    }

    /// The scalar offset of the first `needle` in `text`, or nil.
    private static func position(of needle: String, in text: String) -> Int? {
        let haystack = Array(text.unicodeScalars), pattern = Array(needle.unicodeScalars)
        guard haystack.count >= pattern.count else { return nil }
        return (0...(haystack.count - pattern.count)).first { Array(haystack[$0..<($0 + pattern.count)]) == pattern }
    }
}
