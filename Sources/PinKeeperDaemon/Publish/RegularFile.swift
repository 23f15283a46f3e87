import FoundationEssentials
import Glibc
import PinKeeper

/// What `readRegularFile` found at a path.
enum ReadOutcome {
    case missing
    /// The file is still the version the caller already knows.
    case unchanged
    case read(Data, FileIdentity)
}

/// The most the daemon reads of each kind of file it keeps: far above what it writes, far below
/// what would hurt. Without a limit, a huge file at the path (planted, or sparse: its size costs
/// no disk) would be read whole into memory, and parsed.
struct ReadLimit: Sendable, Equatable {
    var bytes: Int
    /// What the file is and what to do about a larger one, for the error.
    var kind: String
    var remedy: String

    /// A published list: the reader library's own limit (`CacheReader.maximumFileSize`), so the
    /// daemon builds on no file that its readers refuse. A larger file counts as corrupt.
    static let cacheFile = ReadLimit(
        bytes: CacheReader.maximumFileSize, kind: "a cache file", remedy: "a verified update replaces it")
    /// A few numbers, one reason line and the list's validators: a few hundred bytes, and at most
    /// about 200 KiB with an ETag at libcurl's 100 KiB header limit, escaped for JSON. JSONDecoder
    /// needs several times the file's size while it parses.
    static let stateFile = ReadLimit(
        bytes: 1 << 20, kind: "a state file",
        remedy: "remove it; the next update writes a new one")
    /// About 300 bytes per probe target, a few KiB with the longest reasons (an error naming a
    /// long path): over a thousand targets even then, more than a store probes.
    static let probeFile = ReadLimit(
        bytes: 4 << 20, kind: "the probe results of a store",
        remedy: "remove it; the next probe pass writes a new one")
}

/// Reads a whole regular file of at most `limit` bytes: a larger one is refused from its size,
/// before anything is read. O_NOFOLLOW refuses a symlink; O_NONBLOCK makes opening a FIFO
/// planted at the path return at once (it is then refused as not a regular file) instead of
/// waiting for a writer. Skips the read when the open file is still the version `known`.
func readRegularFile(_ path: String, limit: ReadLimit, unlessUnchanged known: FileIdentity? = nil) -> Result<ReadOutcome, FileError> {
    let fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
    guard fd >= 0 else {
        if errno == ENOENT { return .success(.missing) }
        return .failure(FileError(errno == ELOOP ? "refusing to follow a symlink at" : "cannot open", path))
    }
    defer { close(fd) }
    var info = stat()
    guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
        return .failure(FileError("refusing a file that is not a regular file (a FIFO, device or directory?) at", path, code: EINVAL))
    }
    let identity = FileIdentity(info)
    if identity == known { return .success(.unchanged) }
    func tooLarge(_ size: Int) -> FileError {
        FileError(
            "refusing a file of \(size) bytes, more than the \(limit.bytes >> 20) MiB of \(limit.kind) (\(limit.remedy)), at",
            path, code: EFBIG)
    }
    guard info.st_size <= limit.bytes else { return .failure(tooLarge(Int(info.st_size))) }
    var data = Data()
    data.reserveCapacity(Int(info.st_size))
    var buffer = [UInt8](repeating: 0, count: 65_536)
    while true {
        // One byte past the limit at most: a file that grew after fstat is refused all the same.
        let wanted = min(buffer.count, limit.bytes + 1 - data.count)
        let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, wanted) }
        if n < 0 && errno == EINTR { continue }
        guard n >= 0 else { return .failure(FileError("cannot read", path)) }
        if n == 0 { return .success(.read(data, identity)) }
        data.append(contentsOf: buffer[0..<n])
        guard data.count <= limit.bytes else { return .failure(tooLarge(data.count)) }
    }
}
