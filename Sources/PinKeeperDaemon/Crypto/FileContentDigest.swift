import Glibc

/// SHA-256 of a file's contents as they are now, through symlinks (a ConfigMap's files are
/// symlinks into its `..data`), for telling whether a file changed since it was last used: the
/// configuration files (`ConfigSnapshot`) and a store's `ca_file` (`FetchSettings`).
/// O_NONBLOCK: a FIFO at the path is not waited on, and like any file that is not regular it
/// has no digest. At most `readLimit` bytes are hashed; a larger file's size is hashed after
/// them, so growing it still changes the digest.
enum FileContentDigest {
    /// nil: the file cannot be opened or read, or is not a regular file.
    static func sha256(ofFile path: String, readLimit: Int = 16 << 20) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return nil }
        var hash = SHA256Stream()
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        var total = 0
        while total < readLimit {
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, min($0.count, readLimit - total)) }
            if count < 0 && errno == EINTR { continue }
            guard count >= 0 else { return nil }
            if count == 0 { break }
            buffer.withUnsafeBytes { hash.update(UnsafeRawBufferPointer(rebasing: $0[..<count])) }
            total += count
        }
        if Int64(info.st_size) > Int64(total) {
            withUnsafeBytes(of: Int64(info.st_size).littleEndian) { hash.update($0) }
        }
        return hash.finish()
    }
}
