import Glibc
import Synchronization

/// The fsync of a directory after a rename into it, shared by the writers that renamed while
/// another fsync of it ran (a group commit): the next fsync begins after all their renames and
/// covers them. Each writer still returns only once a directory fsync begun after its own rename
/// has ended, with that fsync's result, so a rename it reports durable is; a pass over 1,000
/// stores made 2,000 directory fsyncs, most of them at the same time as others.
final class DirectorySync: Sendable {
    static let shared = DirectorySync()

    private final class Group: @unchecked Sendable {  // everything but `lock` is guarded by `lock`
        let lock = ConditionLock()
        /// Writers that asked so far; each one's number is its ticket.
        var requested: UInt64 = 0
        /// Every ticket up to this one was covered by a finished fsync.
        var covered: UInt64 = 0
        /// The result (0, or the errno) of the fsync that covered a ticket, until its writer takes it.
        var results: [UInt64: Int32] = [:]
        var syncing = false
    }

    private enum Turn {
        case done(Int32)
        /// Run the fsync for every ticket up to this one.
        case lead(UInt64)
    }

    private let groups = Mutex<[String: Group]>([:])

    /// Called after a rename into `directory`, open as `fd`: 0 once an fsync of the directory
    /// begun after the rename has succeeded, else the errno of that fsync.
    func sync(_ fd: Int32, directory: String, fileSystem: any FileSystem) -> Int32 {
        // Writers through different kinds of file-system seam (tests inject faults) never share an fsync,
        // and the directory is the one open, not its path: a path replaced meanwhile is another.
        var info = stat()
        let opened = fstat(fd, &info) == 0 ? "\(info.st_dev):\(info.st_ino)" : directory
        let key = "\(type(of: fileSystem))\u{0}\(opened)"
        let group = groups.withLock { groups in
            if let group = groups[key] { return group }
            let group = Group()
            groups[key] = group
            return group
        }
        let ticket = group.lock.withLock {
            group.requested += 1
            return group.requested
        }
        while true {
            let turn = group.lock.withLock { () -> Turn in
                while true {
                    if let result = group.results.removeValue(forKey: ticket) { return .done(result) }
                    if !group.syncing {
                        group.syncing = true
                        return .lead(group.requested)
                    }
                    group.lock.wait()
                }
            }
            switch turn {
            case .done(let result):
                return result
            case .lead(let upTo):
                let result = fileSystem.fsync(fd) == 0 ? 0 : errno
                group.lock.withLock {
                    for covered in (group.covered + 1)...upTo { group.results[covered] = result }
                    (group.syncing, group.covered) = (false, upTo)
                }
                group.lock.broadcast()
            }
        }
    }
}
