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
