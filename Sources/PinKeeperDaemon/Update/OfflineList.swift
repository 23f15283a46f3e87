public import FoundationEssentials
import Glibc

/// The file of `pinkeeper import`: read whole, at most the store's `max_response_size`, and
/// only from a regular file (or stdin for `-`), never waiting on a FIFO or reading a device.
public enum OfflineList {
    public struct ReadError: Error, CustomStringConvertible {
        public var description: String
    }

    public static func read(_ path: String, limit: Int) throws(ReadError) -> Data {
        if path == "-" { return try readAll(STDIN_FILENO, name: "standard input", limit: limit) }
        // O_NONBLOCK: opening a FIFO returns at once, and the fstat below refuses it.
        let fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else { throw ReadError(description: "cannot open \(path): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw ReadError(description: "cannot examine \(path): \(String(cString: strerror(errno)))") }
        guard info.st_mode & S_IFMT == S_IFREG else {
            throw ReadError(
                description: "\(path) is not a regular file (a FIFO, device or directory?); give the list's file, or - for standard input")
        }
        return try readAll(fd, name: path, limit: limit)
    }

    /// Reads one byte past `limit` so that a file exactly at the limit passes and a longer one does not.
    private static func readAll(_ fd: Int32, name: String, limit: Int) throws(ReadError) -> Data {
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while data.count <= limit {
            // limit - data.count + 1, without overflowing when the limit is Int.max.
            let wanted = min(buffer.count - 1, limit - data.count) + 1
            let n = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, wanted) }
            if n < 0 && errno == EINTR { continue }
            guard n >= 0 else { throw ReadError(description: "cannot read \(name): \(String(cString: strerror(errno)))") }
            if n == 0 { return data }
            data.append(contentsOf: buffer[0..<n])
        }
        throw ReadError(description: "\(name) is larger than the store's max_response_size (\(limit) bytes)")
    }
}
