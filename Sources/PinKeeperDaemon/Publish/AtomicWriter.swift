public import FoundationEssentials
public import Glibc
public import PinKeeper

/// Replaces a file so that readers see either the old or the new bytes, never a partial,
/// empty or missing file: exclusive temp file in the same directory, write, fsync, chmod,
/// rename over the target, fsync the directory (an fsync begun after the rename, which may be
/// shared with other writers into the directory: `DirectorySync`).
public struct AtomicWriter: Sendable {
    public var fileSystem: any FileSystem
    /// Write permission bits that make a directory unacceptable: by default group and others,
    /// who could otherwise plant or swap files beside ours.
    public var refusedDirectoryBits: mode_t
    /// Refuse a directory owned by anyone but us or root: its owner could swap our files.
    public var refusesForeignOwner: Bool

    public init(
        fileSystem: any FileSystem = PosixFileSystem(), refusedDirectoryBits: mode_t = S_IWGRP | S_IWOTH,
        refusesForeignOwner: Bool = true
    ) {
        self.fileSystem = fileSystem
        self.refusedDirectoryBits = refusedDirectoryBits
        self.refusesForeignOwner = refusesForeignOwner
    }

    /// Temp files are named after the target and the writer's pid, so a later run can tell
    /// leftovers of dead writers from a live writer's file.
    static func tempPrefix(for name: String) -> String { ".\(name).tmp-" }

    /// Returns the identity of the file now in place.
    @discardableResult
    public func write(_ data: some ContiguousBytes, to name: String, in directory: String, mode: mode_t = 0o644) throws(FileError)
        -> FileIdentity
    {
        try write(to: name, in: directory, mode: mode) { (append) throws(FileError) in try append(data) }
    }

    /// The same, for contents made in pieces: `contents` hands each piece to `append` as it is
    /// made, so the whole file is never in memory. If `contents` throws, the temp file goes and
    /// the file in place stays as it was.
    @discardableResult
    public func write(
        to name: String, in directory: String, mode: mode_t = 0o644,
        contents: (_ append: (any ContiguousBytes) throws(FileError) -> Void) throws(FileError) -> Void
    ) throws(FileError) -> FileIdentity {
        try prepare(to: name, in: directory, mode: mode, contents: contents).commit()
    }

    /// `write` up to the rename: the temp file written, synced and given its mode, the directory
    /// checked and held open. `commit` puts it in place; `discard`, or dropping it, removes it.
    /// For contents that can be written before it is decided whether they are published.
    public func prepare(
        to name: String, in directory: String, mode: mode_t = 0o644,
        contents: (_ append: (any ContiguousBytes) throws(FileError) -> Void) throws(FileError) -> Void
    ) throws(FileError) -> PreparedFile {
        let dir = fileSystem.openDirectory(directory)
        guard dir >= 0 else { throw FileError("cannot open directory", directory) }
        var handedOver = false
        defer { if !handedOver { close(dir) } }
        try checkDirectory(dir, directory)
        try checkTarget(dir, name, directory)

        let temp = Self.tempPrefix(for: name) + "\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let fd = fileSystem.createExclusive(dir, temp, mode: mode)
        guard fd >= 0 else { throw FileError("cannot create", "\(directory)/\(temp)") }
        var written = false
        defer { if !written { unlinkat(dir, temp, 0) } }
        var info = stat()
        do {
            defer { close(fd) }
            try contents { (piece) throws(FileError) in try writeAll(fd, piece, path: "\(directory)/\(temp)") }
            guard fileSystem.fsync(fd) == 0 else { throw FileError("cannot fsync", "\(directory)/\(temp)") }
            // The umask must not decide who may read the cache.
            guard fchmod(fd, mode) == 0 else { throw FileError("cannot chmod", "\(directory)/\(temp)") }
            guard fstat(fd, &info) == 0 else { throw FileError("cannot stat", "\(directory)/\(temp)") }
        }
        (written, handedOver) = (true, true)
        return PreparedFile(writer: self, directory: directory, dir: dir, name: name, temp: temp, info: info)
    }

    /// A temp file `prepare` wrote, waiting beside its target.
    public final class PreparedFile: @unchecked Sendable {  // used by one thread at a time
        private let writer: AtomicWriter
        private let directory: String, name: String, temp: String
        private let info: stat
        /// The directory, open since it was checked; -1 once committed or discarded.
        private var dir: Int32

        fileprivate init(writer: AtomicWriter, directory: String, dir: Int32, name: String, temp: String, info: stat) {
            (self.writer, self.directory, self.dir, self.name, self.temp, self.info) = (writer, directory, dir, name, temp, info)
        }

        deinit { discard() }

        /// Renames the file over its target and syncs the directory; returns the identity of the
        /// file now in place. A failure before the rename removes the temp file; a failed directory
        /// fsync after it is marked `afterReplacing`, since the new file is then already in place.
        public func commit() throws(FileError) -> FileIdentity {
            guard dir >= 0 else { throw FileError("already committed or discarded", "\(directory)/\(temp)") }
            defer { close(dir); dir = -1 }
            var renamed = false
            defer { if !renamed { unlinkat(dir, temp, 0) } }
            try writer.checkTarget(dir, name, directory)
            guard writer.fileSystem.rename(dir, temp, name) == 0 else {
                throw FileError("cannot rename into place", "\(directory)/\(name)")
            }
            renamed = true
            // Shared with the writers that renamed into the directory meanwhile (DirectorySync).
            let synced = DirectorySync.shared.sync(dir, directory: directory, fileSystem: writer.fileSystem)
            guard synced == 0 else { throw FileError("cannot fsync directory", directory, code: synced, afterReplacing: true) }
            return FileIdentity(info)
        }

        /// Removes the temp file; the file in place stays as it was.
        public func discard() {
            guard dir >= 0 else { return }
            unlinkat(dir, temp, 0)
            close(dir)
            dir = -1
        }
    }

    private func writeAll(_ fd: Int32, _ data: any ContiguousBytes, path: String) throws(FileError) {
        var offset = 0
        var failure: FileError?
        data.withUnsafeBytes { bytes in
            while offset < bytes.count {
                let n = fileSystem.write(fd, UnsafeRawBufferPointer(rebasing: bytes[offset...]))
                if n < 0 && errno == EINTR { continue }
                guard n > 0 else { failure = FileError("cannot write", path, code: n == 0 ? ENOSPC : errno); return }
                offset += n
            }
        }
        if let failure { throw failure }
    }

    private func checkDirectory(_ dir: Int32, _ path: String) throws(FileError) {
        var info = stat()
        guard fstat(dir, &info) == 0 else { throw FileError("cannot stat", path) }
        if let problem = Self.unsafeWriters(info.st_mode & refusedDirectoryBits) {
            throw FileError("refusing directory \(problem)", path, code: EPERM)
        }
        if refusesForeignOwner, let owner = Self.foreignOwner(info.st_uid) {
            throw FileError("refusing directory owned by \(owner) (chown it to the user pinkeeper runs as)", path, code: EPERM)
        }
    }

    /// The owner, named, when it is neither the effective user nor root; nil when it is one of them.
    /// Root also accepts a system account's directory (uid ≤ 999, Debian's SYS_UID_MAX): that is
    /// how `sudo pinkeeper update` meets the service user's /var/cache/pinkeeper, while a directory
    /// planted by an ordinary login user (uid ≥ 1000) stays refused.
    static func foreignOwner(_ uid: uid_t) -> String? {
        guard uid != geteuid() && uid != 0 else { return nil }
        if geteuid() == 0 && uid <= systemAccountMaxUID { return nil }
        var entry = passwd(), result: UnsafeMutablePointer<passwd>?
        var buffer = [CChar](repeating: 0, count: 4096)
        if getpwuid_r(uid, &entry, &buffer, buffer.count, &result) == 0, let name = result?.pointee.pw_name {
            return "uid \(uid) (\(String(cString: name)))"
        }
        return "uid \(uid)"
    }

    /// Who besides the owner may write a directory with these permission bits, and the fix.
    static let systemAccountMaxUID: uid_t = 999

    static func unsafeWriters(_ bits: mode_t) -> String? {
        switch (bits & S_IWGRP != 0, bits & S_IWOTH != 0) {
        case (true, true): "writable by its group and other users (chmod go-w it)"
        case (true, false): "writable by its group (chmod g-w it)"
        case (false, true): "writable by other users (chmod o-w it)"
        case (false, false): nil
        }
    }

    /// rename(2) would replace a planted symlink silently; refuse it so the operator sees it.
    fileprivate func checkTarget(_ dir: Int32, _ name: String, _ directory: String) throws(FileError) {
        var info = stat()
        guard fstatat(dir, name, &info, AT_SYMLINK_NOFOLLOW) == 0 else { return }
        if info.st_mode & S_IFMT != S_IFREG {
            throw FileError("refusing to replace a non-regular file (a symlink?) at", "\(directory)/\(name)", code: EEXIST)
        }
    }

    /// Removes temp files left by writers that died (crash, SIGKILL) before renaming; from the
    /// names of `listing` when given (a pass lists its cache directory once), else listing now.
    public static func removeStaleTemps(for name: String, in directory: String, listing: TempListing? = nil) {
        guard let names = listing?.hiddenNames ?? (try? FileManager.default.contentsOfDirectory(atPath: directory)) else { return }
        let prefix = tempPrefix(for: name)
        for entry in names where entry.hasPrefix(prefix) {
            let pidText = entry.dropFirst(prefix.count).prefix { $0 != "-" }
            if let pid = pid_t(pidText), pid != getpid() {
                let result = kill(pid, 0)
                if writerIsAlive(killResult: result, error: result == 0 ? 0 : errno) { continue }
            }
            unlink("\(directory)/\(entry)")
        }
    }

    /// kill(pid, 0) failing with EPERM means the pid exists but belongs to another user: a
    /// live writer whose file must stay. Any other failure (ESRCH) means the writer is gone.
    static func writerIsAlive(killResult: Int32, error: Int32) -> Bool {
        killResult == 0 || error == EPERM
    }
}
