public import Glibc

/// What `stat` says about a file: enough to notice an atomic replacement (a new inode) or an
/// edit in place (size, mtime). Readers and the daemon use it to skip re-parsing unchanged files.
public struct FileIdentity: Equatable, Sendable {
    var device: UInt64
    var inode: UInt64
    var size: Int64
    var modifiedSeconds: Int
    var modifiedNanoseconds: Int

    public init(_ info: stat) {
        device = UInt64(info.st_dev)
        inode = UInt64(info.st_ino)
        size = Int64(info.st_size)
        modifiedSeconds = info.st_mtim.tv_sec
        modifiedNanoseconds = info.st_mtim.tv_nsec
    }

    enum Observed: Equatable, Sendable {
        case missing
        case file(FileIdentity)
        case failed(errno: Int32)
    }

    static func of(_ path: String) -> Observed {
        var info = stat()
        if stat(path, &info) == 0 { return .file(FileIdentity(info)) }
        return errno == ENOENT ? .missing : .failed(errno: errno)
    }
}
