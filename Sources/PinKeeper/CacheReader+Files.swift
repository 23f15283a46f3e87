import FoundationEssentials  // not Foundation: a process linking only this library loads no ICU
import Glibc
import Synchronization

/// How a reader reads its files: without following a planted symlink or waiting on a FIFO,
/// regular files only, checked for size and for who may write them, then parsed strictly.
extension CacheReader {
    /// Reads and checks a cache file; nil when it does not exist. `store`, when given, must
    /// match the file's `pinkeeper.store`.
    public static func read(cacheFile path: String, store: String? = nil) throws(CacheReaderError) -> CacheFile? {
        guard let (data, _) = try readFile(path, followingSymlink: false) else { return nil }
        return try parse(data, path: path, store: store)
    }

    /// Reads a Wultra fallback list (`{"fingerprints": [...]}`); its `domainsConfig` is ignored,
    /// as the mobile clients ignore it in fallback data. Unlike a cache file it may be a symlink:
    /// it is configuration the operator placed, not a file in a directory the service writes.
    public static func readFallback(path: String) throws(CacheReaderError) -> [Pin] {
        guard let (data, _) = try readFile(path, followingSymlink: true) else {
            throw CacheReaderError(.missing, path, "does not exist")
        }
        do {
            return try PinList.decode(data, withMetadata: false).list.pins
        } catch {
            throw CacheReaderError(.init(error.code), path, "is not a Wultra fingerprint list: \(error.reason)")
        }
    }

    static func parse(_ data: [UInt8], path: String, store: String?) throws(CacheReaderError) -> CacheFile {
        let cache: CacheFile
        do {
            cache = try CacheFile(json: data)
        } catch {
            throw CacheReaderError(.init(error.code), path, "is not a pinkeeper cache file: \(error.reason)")
        }
        if let store, cache.metadata.store != store {
            throw CacheReaderError(.wrongStore, path, "belongs to store '\(cache.metadata.store)', not '\(store)'")
        }
        return cache
    }

    /// The whole file and the identity of what was read (from the open descriptor, so a
    /// replacement racing with the read is noticed at the next question). nil when missing.
    /// O_NONBLOCK: a FIFO planted at the path is refused at once instead of waiting for a writer.
    static func readFile(_ path: String, followingSymlink: Bool) throws(CacheReaderError) -> ([UInt8], FileIdentity)? {
        let fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | (followingSymlink ? 0 : O_NOFOLLOW))
        guard fd >= 0 else {
            let code = errno
            if code == ENOENT { return nil }
            if code == ELOOP && !followingSymlink { throw CacheReaderError(.symlink, path, "is a symlink, which is never followed") }
            throw CacheReaderError(.ioError(errno: code), path, "cannot be opened: \(String(cString: strerror(code)))")
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            let code = errno
            throw CacheReaderError(.ioError(errno: code), path, "cannot be examined: \(String(cString: strerror(code)))")
        }
        guard info.st_mode & S_IFMT == S_IFREG else {
            throw CacheReaderError(.notRegularFile, path, "is not a regular file (a FIFO, device or directory?)")
        }
        try checkPermissions(path, mode: info.st_mode)
        guard info.st_size <= maximumFileSize else {
            throw CacheReaderError(.tooLarge, path, "is larger than \(maximumFileSize) bytes")
        }
        // Straight into an array of the size fstat gave, one byte more to see whether the file
        // grew since (edited in place); only then is the rest read piece by piece.
        var failure: Int32 = 0
        let size = Int(info.st_size)
        var data = [UInt8](unsafeUninitializedCapacity: size + 1) { buffer, count in
            count = 0
            failure = readFully(fd, into: UnsafeMutableRawBufferPointer(buffer), count: &count)
        }
        if failure == 0 && data.count > size {
            var buffer = [UInt8](repeating: 0, count: 65_536)
            while failure == 0 && data.count <= maximumFileSize {
                var count = 0
                failure = buffer.withUnsafeMutableBytes { readFully(fd, into: $0, count: &count) }
                if count == 0 { break }
                data.append(contentsOf: buffer[0..<count])
            }
        }
        guard failure == 0 else {
            throw CacheReaderError(.ioError(errno: failure), path, "cannot be read: \(String(cString: strerror(failure)))")
        }
        guard data.count <= maximumFileSize else {
            throw CacheReaderError(.tooLarge, path, "is larger than \(maximumFileSize) bytes")
        }
        return (data, FileIdentity(info))
    }

    /// Refuses a file any local user could have written pins into: one writable by others, or
    /// one in a directory others may write without the sticky bit (they could rename their own
    /// file over it). The file's mode is the open descriptor's; the directory's is `stat`ed.
    static func checkPermissions(_ path: String, mode: mode_t) throws(CacheReaderError) {
        guard mode & S_IWOTH == 0 else {
            throw CacheReaderError(
                .insecurePermissions, path, "is writable by other users (mode \(octal(mode))): remove that with chmod o-w")
        }
        let directory = path.utf8.lastIndex(of: UInt8(ascii: "/")).map { String(path[..<$0]) } ?? "."
        var info = stat()
        guard stat(directory.isEmpty ? "/" : directory, &info) == 0 else {
            let code = errno
            let reason = String(cString: strerror(code))
            throw CacheReaderError(.ioError(errno: code), path, "has a directory that cannot be examined: \(reason)")
        }
        guard info.st_mode & S_IWOTH == 0 || info.st_mode & S_ISVTX != 0 else {
            throw CacheReaderError(
                .insecurePermissions, path,
                "is in a directory other users may write (mode \(octal(info.st_mode))) without the sticky bit: "
                    + "remove that with chmod o-w on the directory")
        }
    }

    static func octal(_ mode: mode_t) -> String { "0" + String(mode & 0o7777, radix: 8) }

    /// Reads until `buffer` is full or the file ends; `count` is what was read. The errno of a
    /// failed read, else 0.
    static func readFully(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer, count: inout Int) -> Int32 {
        while count < buffer.count {
            let n = Glibc.read(fd, buffer.baseAddress! + count, buffer.count - count)
            if n < 0 && errno == EINTR { continue }
            guard n >= 0 else { return errno }
            if n == 0 { break }
            count += n
        }
        return 0
    }

    /// A cache file is a few hundred bytes per pin; anything this large is not one. Public so
    /// that the daemon reads and writes by this same limit: it never publishes a larger file.
    public static let maximumFileSize = 64 << 20
}
