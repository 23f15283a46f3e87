import PinKeeper

/// How one store stands, read from disk alone (cache file, fallback file, state file), so that
/// `pinkeeper status` and the metrics file need no running daemon.
public struct StoreStatus: Sendable, Equatable {
    public var store: String
    public var health: StoreHealth
    /// Unexpired pins in the published cache file.
    public var pins: Int
    /// Unexpired pins from the store's `fallback_file`.
    public var fallbackPins: Int
    /// When the first common name loses its last valid pin (each name counts with its
    /// latest-expiring pin); nil without valid pins.
    public var earliestExpiry: Int64?
    public var earliestExpiryName: String?
    /// The cache file's `pinkeeper.updated`.
    public var updated: Int64?
    public var lastSuccess: Int64?
    public var lastAttempt: Int64?
    public var lastResult: UpdateResult?
    public var lastReason: String?
    /// nil when the state file cannot be read.
    public var consecutiveFailures: Int?
    /// When the daemon fetches next (its regular update or a retry); now when it is due; nil
    /// when the state file cannot be read (a retry time may be recorded there).
    public var nextUpdate: Int64?
    public var cacheFile: String
    /// Files that could not be used (corrupt cache, unreadable fallback or state), one sentence each.
    public var problems: [String]
    /// `ListDigest` of the last verified list (state file); nil before one, or when unknown.
    public var listDigest: String? = nil
    /// `authoritative = true`: an empty store may be what the server's list said.
    public var authoritative = false
    /// Fetches a probe caused (`min_probe_refresh`), from the state file; nil when unknown.
    public var probeRefreshes: Int? = nil
}

/// Every selected store's status at one moment, and what `pinkeeper status` exits with.
public struct StatusReport: Sendable, Equatable {
    public var generated: Int64
    public var stores: [StoreStatus]
    /// The last result of every configured probe target of the selected stores.
    public var probes: [ProbeStatus]

    public init(generated: Int64, stores: [StoreStatus], probes: [ProbeStatus] = []) {
        self.generated = generated
        self.stores = stores
        self.probes = probes
    }

    /// Reads the cache and state directories for the stores in `storeIDs` (all when empty),
    /// in configuration order. Never writes, never moves a corrupt file aside.
    public static func collect(configuration: Configuration, storeIDs: [String] = [], now: Int64) -> StatusReport {
        let selected = storeIDs.isEmpty ? configuration.stores : configuration.stores.filter { storeIDs.contains($0.id) }
        let state = StateDirectory(path: configuration.stateDirectory)
        return StatusReport(
            generated: now,
            stores: selected.map {
                status(
                    of: $0, cacheDirectory: configuration.cacheDirectory,
                    state: state, now: now)
            },
            probes: ProbeStatus.collect(selected, stateDirectory: configuration.stateDirectory))
    }

    static func status(of store: StoreConfig, cacheDirectory: String, state directory: StateDirectory, now: Int64) -> StoreStatus {
        let path = CacheDirectory(path: cacheDirectory).filePath(for: store.id)
        var problems: [String] = []
        var cache: CacheFile?
        do {
            cache = try CacheReader.read(cacheFile: path, store: store.id)
        } catch {
            problems.append("cache file \(error)")
        }
        var fallback: [Pin] = []
        if let file = store.fallbackFile {
            do {
                fallback = try CacheReader.readFallback(path: file)
            } catch {
                problems.append("fallback file \(error)")
            }
        }
        // Status reads the file alone and never guesses: an unreadable one leaves the result unknown.
        var state = StoreState(), stateKnown = true
        switch directory.read(store: store.id) {
        case .absent: break
        case .known(let stored): state = stored
        case .unreadable(let reason):
            stateKnown = false
            problems.append("the last update's result is unknown: \(reason)")
        }
        let cached = cache?.list.pins.filter { !$0.isExpired(at: now) } ?? []
        let fallbackValid = fallback.filter { !$0.isExpired(at: now) }
        let lastSuccess = state.lastSuccess ?? cache?.metadata.updated
        let health = StoreHealth.of(
            validPins: cached.count + fallbackValid.count, lastResult: state.lastResult,
            lastSuccess: lastSuccess, now: now,
            periodicUpdateInterval: store.policy.periodicUpdateInterval, stateKnown: stateKnown)
        let soonest = ExpiringPins.soonest(cached + fallbackValid, now: now)
        return StoreStatus(
            store: store.id, health: health, pins: cached.count, fallbackPins: fallbackValid.count,
            earliestExpiry: soonest?.expires, earliestExpiryName: soonest?.name, updated: cache?.metadata.updated,
            lastSuccess: lastSuccess, lastAttempt: state.lastAttempt, lastResult: state.lastResult,
            lastReason: state.lastReason, consecutiveFailures: stateKnown ? state.consecutiveFailures : nil,
            nextUpdate: stateKnown ? DueTime.of(cache: cache, state: state, policy: store.policy, now: now) : nil,
            cacheFile: path, problems: problems, listDigest: state.listDigest.flatMap { ListDigest.isWellFormed($0) ? $0 : nil },
            authoritative: store.policy.authoritative, probeRefreshes: stateKnown ? max(0, state.probeRefreshes ?? 0) : nil)
    }

    /// pinkeeper(8), EXIT STATUS: 0 all fresh; 1 some failing, stale or unknown but every store has valid
    /// pins; 2 any store empty. A probe that found its host unpinned makes it at least 1.
    public var exitCode: Int32 {
        if stores.contains(where: { $0.health == .empty }) { return 2 }
        if stores.contains(where: { $0.health != .fresh }) { return 1 }
        if probes.contains(where: { $0.record?.outcome == .unpinned }) { return 1 }
        return 0
    }
}
