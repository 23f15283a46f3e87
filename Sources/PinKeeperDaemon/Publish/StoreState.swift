import FoundationEssentials
import Glibc
import Synchronization

/// The daemon's bookkeeping for one store, kept in the state directory so that back-off,
/// status and conditional requests survive restarts. Readers of the cache never need it.
public struct StoreState: Codable, Sendable, Equatable {
    public var lastAttempt: Int64?
    public var lastResult: UpdateResult?
    public var lastReason: String?
    public var lastSuccess: Int64?
    public var consecutiveFailures: Int = 0
    /// Do not try again before this time: set after a failure, or after a success that left
    /// the published file (and so its nextUpdate) as it was.
    public var retryAt: Int64?
    /// Validators of the last static list, for a conditional request.
    public var etag: String?
    public var lastModified: String?
    /// SHA-256 (hex) of the last verified static list: the same body again is handled like a 304.
    public var bodyDigest: String?
    /// `ListDigest` of the last verified list: what the pinning service served, for `status`
    /// and the metrics. Kept when validators are forgotten: it still says what was served.
    public var listDigest: String?
    /// Whether the last successful update merged with `authoritative = true`; nil in files
    /// written before pinkeeper recorded it. Turned on since (while the daemon was stopped), the
    /// cached pins are not yet reduced to the service's list: the daemon updates the store at start.
    public var authoritative: Bool?
    /// Fetches the daemon made because a probe found the store's host unpinned or its pins
    /// running out before the next update (`min_probe_refresh`); nil before the first. Kept
    /// here, where the update itself counts it under the store's lock, so `status` reads it.
    public var probeRefreshes: Int?
    /// `FetchSettings` digest of the settings the last fetch used (nil in files written before
    /// pinkeeper recorded it): when the configured ones differ at start or at a reload, the store
    /// is fetched then.
    public var fetchSettings: String?

    public init() {}

    /// One more fetch a probe asked for; the count saturates instead of wrapping.
    mutating func countProbeRefresh() {
        let count = max(0, probeRefreshes ?? 0)
        probeRefreshes = count == .max ? count : count + 1
    }

    /// The next fetch is unconditional and its list verified in full.
    mutating func forgetValidators() { (etag, lastModified, bodyDigest) = (nil, nil, nil) }
}

/// `<state_directory>/<store>.state.json`, written atomically like the cache.
public struct StateDirectory: Sendable {
    public var path: String
    public var writer: AtomicWriter

    public init(path: String, writer: AtomicWriter = AtomicWriter()) {
        self.path = path
        self.writer = writer
    }

    func fileName(for store: String) -> String { Self.fileName(store: store) }
    static func fileName(store: String) -> String { StoreFiles.state(store) }
    public func filePath(for store: String) -> String { "\(path)/\(fileName(for: store))" }

    /// What a state file says, or why nothing can be known from it.
    public enum Stored: Sendable, Equatable {
        /// No update has been recorded yet.
        case absent
        case known(StoreState)
        /// The file exists but cannot be read or parsed (e.g. EACCES for a user outside the
        /// service's 0700 state directory).
        case unreadable(reason: String)
    }

    /// The file alone, without what this process holds unsaved: for `pinkeeper status`.
    public func read(store: String) -> Stored {
        let file = filePath(for: store)
        switch readRegularFile(file, limit: .stateFile) {
        case .success(.missing): return .absent
        case .success(.unchanged): return .absent  // no known version was given
        case .failure(let error):
            let hint = error.code == EACCES ? " (the service keeps it private: run this as root or as the service user)" : ""
            return .unreadable(reason: error.description + hint)
        case .success(.read(let data, _)):
            guard let state = try? JSONDecoder().decode(StoreState.self, from: data) else {
                return .unreadable(reason: "\(file) is not a pinkeeper state file")
            }
            return .known(state)
        }
    }

    /// The store's state for an update: what this process failed to save, unless the file
    /// records a later attempt (another process updated the store since); otherwise the file.
    /// An unreadable file means "nothing known yet", which the next save replaces.
    public func load(store: String) -> StoreState {
        let stored: StoreState? = if case .known(let state) = read(store: store) { state } else { nil }
        let file = filePath(for: store)
        if let unsaved = Self.unsaved.withLock({ $0[file] }) {
            guard let stored, (stored.lastAttempt ?? .min) > (unsaved.lastAttempt ?? .min) else { return unsaved }
            Self.unsaved.withLock { $0[file] = nil }
        }
        return stored ?? StoreState()
    }

    /// Writes the state; when that fails, this process still remembers it, so back-off goes on
    /// from the failures it counted instead of silently starting again at the first step.
    public func save(_ state: StoreState, store: String) throws(FileError) {
        let file = filePath(for: store)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        do throws(FileError) {
            guard let data = try? encoder.encode(state) else { throw FileError("cannot encode the state for", file, code: EINVAL) }
            _ = try writer.write(data, to: fileName(for: store), in: path, mode: 0o644)
            Self.unsaved.withLock { $0[file] = nil }
        } catch {
            Self.unsaved.withLock { $0[file] = state }
            throw error
        }
    }

    /// Per state file, the state this process could not write. Process-wide, so a reload that
    /// builds a new `StateDirectory` for the same path keeps it.
    private static let unsaved = Mutex<[String: StoreState]>([:])
}
