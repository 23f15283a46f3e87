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
        let identity = try writer.write(to: fileName(for: cache.metadata.store), in: path) { (append) throws(FileError) in
            try cache.encode(inPiecesOf: Self.pieceSize) { (piece) throws(FileError) in try append(piece) }
        }
        memo.remember(cache, identity: identity, for: filePath(for: cache.metadata.store))
    }

    /// The file a `publish` of `pins` (in published order, made one at a time) would write,
    /// written beside the store's file but not yet in its place (`commit`). For writing while
    /// it is still being decided whether the file is published at all.
    public func prepare(
        pins: some Sequence<Pin>, domainsConfig: DomainsConfig?, metadata: CacheFile.Metadata
    ) throws(FileError) -> AtomicWriter.PreparedFile {
        try writer.prepare(to: fileName(for: metadata.store), in: path) { (append) throws(FileError) in
            try CacheFile.encode(pins: pins, domainsConfig: domainsConfig, metadata: metadata, inPiecesOf: Self.pieceSize) {
                (piece) throws(FileError) in try append(piece)
            }
        }
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
