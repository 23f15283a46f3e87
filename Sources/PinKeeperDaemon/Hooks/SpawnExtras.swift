import Glibc

/// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34) and `…_addchdir_np` (2.29), which
/// Swift's Glibc module does not import, looked up once at run time.
enum SpawnExtras {
    private typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>?, Int32) -> Int32
    private typealias ChangeDirectory =
        @convention(c) (
            UnsafeMutablePointer<posix_spawn_file_actions_t>?,
            UnsafePointer<CChar>?
        ) -> Int32

    private static let closeFrom: CloseFrom? = symbol("posix_spawn_file_actions_addclosefrom_np")
    private static let changeDirectory: ChangeDirectory? = symbol("posix_spawn_file_actions_addchdir_np")

    private static func symbol<T>(_ name: String) -> T? {
        // RTLD_DEFAULT is the null handle on glibc.
        guard let address = dlsym(UnsafeMutableRawPointer(bitPattern: 0), name) else { return nil }
        return unsafeBitCast(address, to: T.self)
    }

    /// Descriptors 3 and up are closed in the hook: an inherited store lock would stay held as
    /// long as the hook (or anything it leaves running) lives, and sockets are none of its business.
    static func closeInheritedDescriptors(_ actions: inout posix_spawn_file_actions_t) {
        if let closeFrom, closeFrom(&actions, 3) == 0 { return }
        // Older glibc: close what is open now (descriptors opened meanwhile are close-on-exec in our code).
        guard let directory = opendir("/proc/self/fd") else { return }
        defer { closedir(directory) }
        let own = dirfd(directory)
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if let fd = Int32(name), fd > 2, fd != own { posix_spawn_file_actions_addclose(&actions, fd) }
        }
    }

    /// The hook starts in `/`, not wherever the daemon happens to be.
    static func changeDirectory(_ actions: inout posix_spawn_file_actions_t, to path: String) {
        _ = changeDirectory?(&actions, path)
    }
}
