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

/// Reads a whole regular file. O_NOFOLLOW refuses a symlink; O_NONBLOCK makes opening a FIFO
/// planted at the path return at once (it is then refused as not a regular file) instead of
/// waiting for a writer. Skips the read when the open file is still the version `known`.
func readRegularFile(_ path: String, unlessUnchanged known: FileIdentity? = nil) -> Result<ReadOutcome, FileError> {
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
    var data = Data()
    var buffer = [UInt8](repeating: 0, count: 65_536)
    while true {
        let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        if n < 0 && errno == EINTR { continue }
        guard n >= 0 else { return .failure(FileError("cannot read", path)) }
        if n == 0 { return .success(.read(data, identity)) }
        data.append(contentsOf: buffer[0..<n])
    }
}
