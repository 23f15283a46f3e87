import FoundationEssentials
import Glibc
public import PinKeeper

/// The published side of the cache: `<cache_directory>/<store>.json`.
public struct CacheDirectory: Sendable {
    public var path: String
    public var writer: AtomicWriter
    /// The version of each file this process last read or wrote: an unchanged file is not parsed again.
    let memo = FileMemo<CacheFile>()
    /// Set for the length of a pass: the directory's temp files, listed once for all its stores.
    public var passListing: TempListing?
    /// The largest file a publish writes: the limit every reader enforces (`CacheReader`), so
    /// that no reader is handed a file it refuses. Lowered only by tests, to reach it with a short list.
    var maximumFileSize = CacheReader.maximumFileSize

    public init(path: String, writer: AtomicWriter = AtomicWriter()) {
        self.path = path
        self.writer = writer
    }

    /// How much of an encoded file is written at a time.
    static let pieceSize = 256 * 1024

    public func fileName(for store: String) -> String { Self.fileName(store: store) }
    static func fileName(store: String) -> String { StoreFiles.cache(store) }
    public func filePath(for store: String) -> String { "\(path)/\(fileName(for: store))" }

    public enum Loaded: Sendable {
        case missing
        case valid(CacheFile)
        /// The file cannot be used; it stays where it is (readers keep their last good pins)
        /// until a verified update replaces it. `copy` names a copy kept aside for inspection.
        case corrupt(reason: String, copy: String?)
        /// Written by a newer pinkeeper: never replaced, so a downgrade cannot destroy it.
        case newerFormat(Int)
    }

    /// Reads a store's published file without following a symlink or waiting on a FIFO. A file
    /// that does not parse is left in place; with `keepingCopy` (only the update that holds the
    /// store's lock asks for it) it is also copied once to `<store>.json.corrupt-<mtime>`. A file
    /// over `ReadLimit.cacheFile` counts as corrupt too, but is neither read nor copied.
    public func load(store: String, now: Int64, keepingCopy: Bool = false) -> Loaded {
        let file = filePath(for: store)
        let data: Data, identity: FileIdentity
        let known = memo.entry(for: file)
        switch readRegularFile(file, limit: .cacheFile, unlessUnchanged: known?.identity) {
        case .success(.missing): return .missing
        case .success(.unchanged): return known.map { .valid($0.value) } ?? .missing
        case .success(.read(let bytes, let version)): (data, identity) = (bytes, version)
        case .failure(let error): return .corrupt(reason: error.description, copy: nil)
        }
        do {
            let cache = try CacheFile(json: data)
            guard cache.metadata.store == store else {
                return .corrupt(
                    reason: "it belongs to store '\(cache.metadata.store)'", copy: keepingCopy ? keepCopy(data, of: store) : nil)
            }
            memo.remember(cache, identity: identity, for: file)
            return .valid(cache)
        } catch {
            if let format = Self.declaredFormat(data), format > CacheFile.formatVersion { return .newerFormat(format) }
            return .corrupt(reason: error.reason, copy: keepingCopy ? keepCopy(data, of: store) : nil)
        }
    }

    /// Removes the store's temp files that writers left when they died (under the store's lock).
    func removeStaleTemps(for store: String) {
        AtomicWriter.removeStaleTemps(for: fileName(for: store), in: path, listing: passListing)
    }

    /// Written in pieces as they are encoded: a 100,000-entry file is about 25 MB.
    public func publish(_ cache: CacheFile) throws(FileError) {
        let store = cache.metadata.store
        let identity = try writer.write(to: fileName(for: store), in: path) { (append) throws(FileError) in
            var size = 0
            try cache.encode(inPiecesOf: Self.pieceSize) { (piece) throws(FileError) in try bounded(piece, size: &size, append) }
            try refuseOversized(store, size: size)
        }
        memo.remember(cache, identity: identity, for: filePath(for: store))
    }

    /// The file a `publish` of `pins` (in published order, made one at a time) would write,
    /// written beside the store's file but not yet in its place (`commit`). For writing while
    /// it is still being decided whether the file is published at all.
    public func prepare(
        pins: some Sequence<Pin>, domainsConfig: DomainsConfig?, metadata: CacheFile.Metadata
    ) throws(FileError) -> AtomicWriter.PreparedFile {
        try writer.prepare(to: fileName(for: metadata.store), in: path) { (append) throws(FileError) in
            var size = 0
            try CacheFile.encode(pins: pins, domainsConfig: domainsConfig, metadata: metadata, inPiecesOf: Self.pieceSize) {
                (piece) throws(FileError) in try bounded(piece, size: &size, append)
            }
            try refuseOversized(metadata.store, size: size)
        }
    }

    /// Hands a piece to `append` while the file, `size` bytes so far, stays within `maximumFileSize`;
    /// past it, the rest is only counted, for `refuseOversized` to say how large the file would be.
    private func bounded(_ piece: [UInt8], size: inout Int, _ append: (any ContiguousBytes) throws(FileError) -> Void) throws(FileError) {
        size += piece.count
        if size <= maximumFileSize { try append(piece) }
    }

    /// Refuses a file larger than every reader accepts: the writer then removes its temp file and
    /// the published file stays as it was. Merges keep every unexpired pin, so a file can outgrow
    /// the limit although no single response did.
    private func refuseOversized(_ store: String, size: Int) throws(FileError) {
        guard size > maximumFileSize else { return }
        throw FileError(
            "refusing to publish", filePath(for: store), code: EFBIG,
            explanation: "the pins of store '\(store)' (the list just fetched merged with the unexpired pins of earlier ones) "
                + "make a file of \(size) bytes, more than the \(maximumFileSize) bytes every reader accepts, so every reader "
                + "would refuse it; have the pinning service list fewer entries or split them over several stores, set "
                + "authoritative = true (challenge mode) so that pins the service no longer lists are dropped, or lower "
                + "max_response_size so that such a list is refused as soon as it is fetched")
    }

    /// Puts a prepared file in place as the publication of `cache`, which must be what it holds.
    public func commit(_ prepared: AtomicWriter.PreparedFile, as cache: CacheFile) throws(FileError) {
        let identity = try prepared.commit()
        memo.remember(cache, identity: identity, for: filePath(for: cache.metadata.store))
    }

    /// `pinkeeper.format` alone, so that a newer file is recognised however else it changed.
    static func declaredFormat(_ data: Data) -> Int? {
        struct Envelope: Decodable {
            struct Metadata: Decodable { var format: Int }
            var pinkeeper: Metadata
        }
        return (try? JSONDecoder().decode(Envelope.self, from: data))?.pinkeeper.format
    }

    /// A copy for the operator, named after the corrupt version's mtime so that each version
    /// is copied once however often the store is retried.
    private func keepCopy(_ data: Data, of store: String) -> String? {
        var info = stat()
        guard lstat(filePath(for: store), &info) == 0 else { return nil }
        let name = "\(fileName(for: store)).corrupt-\(info.st_mtim.tv_sec)"
        if lstat("\(path)/\(name)", &info) == 0 { return "\(path)/\(name)" }
        guard (try? writer.write(data, to: name, in: path)) != nil else { return nil }
        return "\(path)/\(name)"
    }
}
