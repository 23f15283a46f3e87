import Foundation
import Glibc
import PinKeeper

/// The published side of the cache: `<cache_directory>/<store>.json`.
public struct CacheDirectory: Sendable {
    public var path: String
    public var writer: AtomicWriter
    /// The version of each file this process last read or wrote: an unchanged file is not parsed again.
    let memo = FileMemo<CacheFile>()

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
        let data: Data, identity: FileIdentity
        let known = memo.entry(for: file)
        switch readRegularFile(file, unlessUnchanged: known?.identity) {
        case .success(.missing): return .missing
        case .success(.unchanged): return known.map { .valid($0.value) } ?? .missing
        case .success(.read(let bytes, let version)): (data, identity) = (bytes, version)
        case .failure(let error): return .corrupt(reason: error.description, movedTo: nil)
        }
        do {
            let cache = try CacheFile(json: data)
            guard cache.metadata.store == store else {
                return moveAside(file, now: now, reason: "it belongs to store '\(cache.metadata.store)'")
            }
            memo.remember(cache, identity: identity, for: file)
            return .valid(cache)
        } catch {
            return moveAside(file, now: now, reason: error.reason)
        }
    }

    public func publish(_ cache: CacheFile) throws(FileError) {
        let identity = try writer.write(cache.encoded(), to: fileName(for: cache.metadata.store), in: path)
        memo.remember(cache, identity: identity, for: filePath(for: cache.metadata.store))
    }

    private func moveAside(_ file: String, now: Int64, reason: String) -> Loaded {
        let target = "\(file).corrupt-\(now)"
        return .corrupt(reason: reason, movedTo: rename(file, target) == 0 ? target : nil)
    }
}

enum ReadOutcome {
    case missing
    /// The file is still the version the caller already knows.
    case unchanged
    case read(Data, FileIdentity)
}

/// Reads a whole regular file, refusing symlinks (O_NOFOLLOW); skips the read when the open
/// file is still the version `known`.
func readRegularFile(_ path: String, unlessUnchanged known: FileIdentity? = nil) -> Result<ReadOutcome, FileError> {
    let fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
    guard fd >= 0 else {
        if errno == ENOENT { return .success(.missing) }
        return .failure(FileError(errno == ELOOP ? "refusing to follow a symlink at" : "cannot open", path))
    }
    defer { close(fd) }
    var info = stat()
    guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
        return .failure(FileError("not a regular file:", path, code: EINVAL))
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
