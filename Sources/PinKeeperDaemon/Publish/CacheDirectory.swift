import Foundation
import Glibc
import PinKeeper

/// The published side of the cache: `<cache_directory>/<store>.json`.
public struct CacheDirectory: Sendable {
    public var path: String
    public var writer: AtomicWriter

    public init(path: String, writer: AtomicWriter = AtomicWriter()) {
        self.path = path
        self.writer = writer
    }

    public func fileName(for store: String) -> String { "\(store).json" }
    public func filePath(for store: String) -> String { "\(path)/\(fileName(for: store))" }

    public enum Loaded: Sendable {
        case missing
        case valid(CacheFile)
        /// The file could not be parsed and was moved aside to `movedTo`.
        case corrupt(reason: String, movedTo: String?)
    }

    /// Reads a store's published file without following a symlink; a file that does not parse
    /// is renamed to `<store>.json.corrupt-<unix time>` so the store is fetched afresh.
    public func load(store: String, now: Int64) -> Loaded {
        let file = filePath(for: store)
        let data: Data
        switch readRegularFile(file) {
        case .success(nil): return .missing
        case .success(let bytes?): data = bytes
        case .failure(let error): return .corrupt(reason: error.description, movedTo: nil)
        }
        do {
            let cache = try CacheFile(json: data)
            guard cache.metadata.store == store else {
                return moveAside(file, now: now, reason: "it belongs to store '\(cache.metadata.store)'")
            }
            return .valid(cache)
        } catch {
            return moveAside(file, now: now, reason: error.reason)
        }
    }

    public func publish(_ cache: CacheFile) throws(FileError) {
        try writer.write(cache.encoded(), to: fileName(for: cache.metadata.store), in: path)
    }

    private func moveAside(_ file: String, now: Int64, reason: String) -> Loaded {
        let target = "\(file).corrupt-\(now)"
        return .corrupt(reason: reason, movedTo: rename(file, target) == 0 ? target : nil)
    }
}

/// Reads a whole regular file, refusing symlinks (O_NOFOLLOW). nil when it does not exist.
func readRegularFile(_ path: String) -> Result<Data?, FileError> {
    let fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
    guard fd >= 0 else {
        if errno == ENOENT { return .success(nil) }
        return .failure(FileError(errno == ELOOP ? "refusing to follow a symlink at" : "cannot open", path))
    }
    defer { close(fd) }
    var info = stat()
    guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
        return .failure(FileError("not a regular file:", path, code: EINVAL))
    }
    var data = Data()
    var buffer = [UInt8](repeating: 0, count: 65_536)
    while true {
        let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        if n < 0 && errno == EINTR { continue }
        guard n >= 0 else { return .failure(FileError("cannot read", path)) }
        if n == 0 { return .success(data) }
        data.append(contentsOf: buffer[0..<n])
    }
}
