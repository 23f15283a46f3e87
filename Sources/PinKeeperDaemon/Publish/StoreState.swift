import Foundation

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

    public init() {}
}

/// `<state_directory>/<store>.state.json`, written atomically like the cache.
public struct StateDirectory: Sendable {
    public var path: String
    public var writer: AtomicWriter

    public init(path: String, writer: AtomicWriter = AtomicWriter()) {
        self.path = path
        self.writer = writer
    }

    func fileName(for store: String) -> String { "\(store).state.json" }

    /// A missing or unreadable state file means "nothing known yet": state is advisory.
    public func load(store: String) -> StoreState {
        guard case .success(.read(let data, _)) = readRegularFile("\(path)/\(fileName(for: store))"),
              let state = try? JSONDecoder().decode(StoreState.self, from: data) else { return StoreState() }
        return state
    }

    public func save(_ state: StoreState, store: String) throws(FileError) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        guard let data = try? encoder.encode(state) else { return }
        _ = try writer.write(data, to: fileName(for: store), in: path, mode: 0o644)
    }
}
