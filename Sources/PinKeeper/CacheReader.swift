import FoundationEssentials  // not Foundation: a process linking only this library loads no ICU
import Glibc
import Synchronization

/// Answers "may I trust this TLS peer?" for a long-running process, from one store's published
/// cache file (`<cache_directory>/<store>.json`) plus the store's fallback pins, with Wultra's
/// semantics (docs/protocol.md §5) and pinkeeper's rule that the host the client verified decides
/// (§5.1): each question names that host, and the leaf's common name when the chain is known.
///
/// Every question first `stat`s the cache file; the file is read and parsed again only when its
/// device, inode, size or modification time changed (the daemon replaces it atomically, so a
/// new version always has a new inode). An unchanged file costs one `stat` and no parsing.
///
/// Safe to share between threads: the parsed pins sit behind a `Mutex`, and each question
/// works on its own copy-on-write snapshot.
///
/// ```swift
/// let pins = try CacheReader(store: "banking", expectedCommonNames: ["api.example.com"])
/// switch pins.verdict(host: "api.example.com", verifiedChain: chain) {   // the chain TLS verified
/// case .trusted: proceed()
/// case .untrusted, .empty: rejectHandshake()   // `empty`: the store needs an update
/// }
/// ```
public final class CacheReader: Sendable {
    /// Where the daemon publishes when the configuration does not say otherwise.
    public static let defaultCacheDirectory = "/var/cache/pinkeeper"

    /// The cache file this reader follows.
    public let path: String
    /// When set, the file's `pinkeeper.store` must name this store.
    public let store: String?
    /// The store's `expected_common_names`: any other name is untrusted.
    public let expectedCommonNames: [String]?
    /// Pins from the store's `fallback_file`, used after the cached ones; never reloaded.
    public let fallbackPins: [Pin]

    private let loaded: Mutex<Loaded>

    /// What each version of the file may contribute, decided once per version (nil: all of it).
    private let usable: (@Sendable (CacheFile) -> CacheFile)?

    /// Opens a cache file. A missing file is not an error (the daemon may not have published
    /// yet: every answer is then `empty` unless fallback pins exist); an unreadable or invalid
    /// one is, and so is one other users may write or that sits in a directory they may write
    /// without the sticky bit (`insecurePermissions`). `usable`, when given, narrows each version read before it answers anything (the
    /// daemon's own commands drop the pins of keys no longer configured, as its next update will).
    public init(
        path: String, store: String? = nil, fallbackPins: [Pin] = [], expectedCommonNames: [String]? = nil,
        usable: (@Sendable (CacheFile) -> CacheFile)? = nil
    ) throws(CacheReaderError) {
        self.path = path
        self.store = store
        self.expectedCommonNames = expectedCommonNames
        self.fallbackPins = fallbackPins
        self.usable = usable
        let first = Loaded.initial(fallback: fallbackPins).refreshed(
            identity: FileIdentity.of(path), path: path,
            store: store, fallback: fallbackPins, usable: usable)
        if let problem = first.problem { throw problem }
        self.loaded = Mutex(first)
    }

    /// Opens `<cacheDirectory>/<store>.json`, with the pins of the store's `fallback_file`.
    public convenience init(
        store: String, cacheDirectory: String = CacheReader.defaultCacheDirectory,
        fallbackFile: String? = nil, expectedCommonNames: [String]? = nil,
        usable: (@Sendable (CacheFile) -> CacheFile)? = nil
    ) throws(CacheReaderError) {
        let fallback = try fallbackFile.map { (file) throws(CacheReaderError) in try Self.readFallback(path: file) } ?? []
        try self.init(
            path: "\(cacheDirectory)/\(store).json", store: store, fallbackPins: fallback,
            expectedCommonNames: expectedCommonNames, usable: usable)
    }

    // MARK: Questions
    //
    // Every question names the host the client connected to and had its TLS stack verify the
    // certificate for (never a name taken from the certificate alone), and, when a chain is
    // known, the leaf's common name: docs/protocol.md §5, "two names". The host is put in
    // its one spelling (`HostName.canonical`, by `PeerNames`) before anything is looked up; a
    // spelling that has none is `untrusted`.

    /// Checks one certificate fingerprint (raw SHA-256 of its DER) at `depth` of the verified
    /// chain (0 = leaf, 1 = its issuer, …).
    public func verdict(
        host: String, commonName: String? = nil, fingerprint: [UInt8], depth: Int = 0,
        now: Int64 = CacheReader.now()
    ) -> Verdict {
        let names = PeerNames(host: host, commonName: commonName)
        return current().validator(for: names, expected: expectedCommonNames)
            .validate(names, fingerprint: fingerprint, depth: depth, now: now)
    }

    /// Checks a leaf certificate given as DER bytes (pass its common name when you have it).
    public func verdict(
        host: String, commonName: String? = nil, certificateDER: [UInt8],
        now: Int64 = CacheReader.now()
    ) -> Verdict {
        verdict(host: host, commonName: commonName, fingerprint: SHA256.digest(certificateDER), depth: 0, now: now)
    }

    /// Checks the *verified* chain of DER certificates, leaf first: the path the TLS stack built
    /// and accepted (with OpenSSL, `SSL_get0_verified_chain`), ending with the trust anchor. Never
    /// pass the certificates the server sent (`SSL_get_peer_cert_chain`): a server may append
    /// any public certificate, even a pinned one, which path building ignores. Each pin is
    /// compared with the certificate at its depth; pins deeper than the chain are skipped.
    /// `commonName` is the leaf's (most specific) CN.
    public func verdict(
        host: String, commonName: String? = nil, verifiedChain: [[UInt8]],
        now: Int64 = CacheReader.now()
    ) -> Verdict {
        let names = PeerNames(host: host, commonName: commonName)
        return current().validator(for: names, expected: expectedCommonNames)
            .validate(names, verifiedChain: verifiedChain, now: now)
    }

    /// Checks the parsed *verified* chain, leaf first, for `host`; the leaf's own common name is
    /// consulted too (see `verdict(host:commonName:verifiedChain:now:)`: never the certificates
    /// the server merely sent).
    public func verdict(host: String, verifiedChain: [Certificate], now: Int64 = CacheReader.now()) -> Verdict {
        verdict(host: host, commonName: verifiedChain.first?.commonName, verifiedChain: verifiedChain.map(\.der), now: now)
    }

    /// Whether the store's `expected_common_names` admit the host or the common name (both
    /// `untrusted` answers look alike; this tells which one it was).
    public func admits(_ names: PeerNames) -> Bool {
        PinValidator(pins: [], expectedCommonNames: expectedCommonNames).admits(names)
    }

    // MARK: Inspection

    /// What the reader currently answers from.
    public struct Snapshot: Sendable {
        /// The published file, nil while none exists.
        public let cache: CacheFile?
        public let fallbackPins: [Pin]
        /// Why the newest version of the file could not be used; the last good one is kept.
        public let problem: CacheReaderError?

        /// Cached pins that may decide trust, then fallback pins, that are not expired at `now`.
        public func validPins(now: Int64) -> [Pin] {
            ((cache?.list.pins ?? []) + fallbackPins).filter { !$0.isExpired(at: now) }
        }
    }

    /// Looks at the file (reloading it if it changed) and returns what answers are based on.
    public func snapshot() -> Snapshot {
        let state = current()
        return Snapshot(cache: state.cache, fallbackPins: fallbackPins, problem: state.problem)
    }

    /// Looks at the file now and throws if its current version cannot be used.
    public func refresh() throws(CacheReaderError) {
        if let problem = current().problem { throw problem }
    }

    public static func now() -> Int64 { Int64(time(nil)) }

    // MARK: Files

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

    fileprivate static func parse(_ data: [UInt8], path: String, store: String?) throws(CacheReaderError) -> CacheFile {
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
    fileprivate static func readFile(_ path: String, followingSymlink: Bool) throws(CacheReaderError) -> ([UInt8], FileIdentity)? {
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
    private static func checkPermissions(_ path: String, mode: mode_t) throws(CacheReaderError) {
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

    private static func octal(_ mode: mode_t) -> String { "0" + String(mode & 0o7777, radix: 8) }

    /// Reads until `buffer` is full or the file ends; `count` is what was read. The errno of a
    /// failed read, else 0.
    private static func readFully(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer, count: inout Int) -> Int32 {
        while count < buffer.count {
            let n = Glibc.read(fd, buffer.baseAddress! + count, buffer.count - count)
            if n < 0 && errno == EINTR { continue }
            guard n >= 0 else { return errno }
            if n == 0 { break }
            count += n
        }
        return 0
    }

    /// A cache file is a few hundred bytes per pin; anything this large is not one.
    static let maximumFileSize = 64 << 20

    // MARK: State

    private func current() -> Loaded {
        let identity = FileIdentity.of(path)
        return loaded.withLock { state in
            if state.identity != identity {
                state = state.refreshed(identity: identity, path: path, store: store, fallback: fallbackPins, usable: usable)
            }
            return state
        }
    }
}

/// The reader's parsed state: the file version it came from and its pins indexed by `PinName`.
private struct Loaded: Sendable {
    /// nil before the first look.
    var identity: FileIdentity.Observed?
    var cache: CacheFile?
    /// Cached pins then fallback pins, per name, in that order.
    var byName: PinIndex
    var problem: CacheReaderError?

    static func initial(fallback: [Pin]) -> Loaded {
        Loaded(identity: nil, cache: nil, byName: index(cache: nil, fallback: fallback), problem: nil)
    }

    /// The state after looking at the file again. A missing file means no cached pins; a file
    /// that cannot be used leaves the last good pins in place and records why.
    func refreshed(
        identity: FileIdentity.Observed, path: String, store: String?, fallback: [Pin],
        usable: ((CacheFile) -> CacheFile)?
    ) -> Loaded {
        switch identity {
        case .missing:
            return Loaded(identity: .missing, cache: nil, byName: Self.index(cache: nil, fallback: fallback), problem: nil)
        case .failed(let code):
            var next = self
            next.identity = identity
            next.problem = CacheReaderError(.ioError(errno: code), path, "cannot be examined: \(String(cString: strerror(code)))")
            return next
        case .file:
            do {
                guard let (data, actual) = try CacheReader.readFile(path, followingSymlink: false) else {
                    return Loaded(identity: .missing, cache: nil, byName: Self.index(cache: nil, fallback: fallback), problem: nil)
                }
                let parsed = try CacheReader.parse(data, path: path, store: store)
                let cache = usable.map { $0(parsed) } ?? parsed
                return Loaded(
                    identity: .file(actual), cache: cache, byName: Self.index(cache: cache, fallback: fallback),
                    problem: nil)
            } catch {
                var next = self
                next.identity = identity
                next.problem = error
                return next
            }
        }
    }

    private static func index(cache: CacheFile?, fallback: [Pin]) -> PinIndex {
        PinIndex(cached: cache?.list.pins ?? [], fallback: fallback)
    }

    /// Only the pins for the peer's names take part: `PinValidator` answers `empty` both for an
    /// empty store and for one without a live pin for the names, so the smaller list gives the
    /// same answer.
    func validator(for names: PeerNames, expected: [String]?) -> PinValidator {
        var pins: [Pin] = []
        for key in names.keys { byName.forEachPin(named: key) { pins.append($0) } }
        return PinValidator(pins: pins, expectedCommonNames: expected, domainsConfig: cache?.list.domainsConfig)
    }
}
