import Glibc
import Synchronization

/// Which version of a file is meant: every atomic replacement makes a new inode, and an
/// in-place change moves size or mtime.
public struct FileIdentity: Equatable, Sendable {
    var device: UInt64
    var inode: UInt64
    var size: Int64
    var modified: timespec

    init(_ info: stat) {
        device = UInt64(info.st_dev)
        inode = UInt64(info.st_ino)
        size = Int64(info.st_size)
        modified = info.st_mtim
    }

    public static func == (a: FileIdentity, b: FileIdentity) -> Bool {
        a.device == b.device && a.inode == b.inode && a.size == b.size
            && a.modified.tv_sec == b.modified.tv_sec && a.modified.tv_nsec == b.modified.tv_nsec
    }
}

/// The parsed form of the version of each file this process last read or wrote, so an update
/// of a large store does not parse the daemon's own unchanged cache file again.
final class FileMemo<Value: Sendable>: Sendable {
    private let entries = Mutex<[String: (identity: FileIdentity, value: Value)]>([:])

    func entry(for path: String) -> (identity: FileIdentity, value: Value)? { entries.withLock { $0[path] } }
    func remember(_ value: Value, identity: FileIdentity, for path: String) {
        entries.withLock { $0[path] = (identity, value) }
    }
}
