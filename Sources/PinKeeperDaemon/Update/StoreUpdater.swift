public import FoundationEssentials
public import Logging
import PinKeeper

/// One update of one store, top to bottom: fetch → verify → merge → publish → remember.
/// Any failure leaves the published file untouched and schedules a retry with back-off.
public struct StoreUpdater: Sendable {
    public var fetcher: any HTTPFetching
    public var cache: CacheDirectory
    public var state: StateDirectory
    public var clock: any WallClock
    public var random: any RandomSource
    public var logger: Logger
    /// How long to wait for another process's update of the same store before reporting it busy.
    public var lockWait: Duration = .seconds(5)
    /// Runs a store's `on_change` hook after a publish that changed its pins (nil: never).
    public var hooks: ChangeHooks?
    /// Rewrites the store's Envoy secrets after a publish (nil: no `envoy_sds_directory`).
    public var envoy: EnvoySecretSync?
    /// This update is one a probe asked for: the state file counts it (`probeRefreshes`).
    public var probeRefresh = false

    public init(
        fetcher: any HTTPFetching, cache: CacheDirectory, state: StateDirectory,
        clock: any WallClock = SystemClock(), random: any RandomSource = SystemRandom(), logger: Logger
    ) {
        self.fetcher = fetcher
        self.cache = cache
        self.state = state
        self.clock = clock
        self.random = random
        self.logger = logger
    }

    public struct Report: Sendable, Equatable {
        public var store: String
        public var result: UpdateResult
        public var reason: String?
        /// Valid pins published for the store after this attempt.
        public var pins: Int
        /// When the store should be tried next (regular update or retry).
        public var nextAttempt: Int64
        public var notModified = false
        /// Another process was updating the store: this attempt did nothing (`result` is the
        /// last recorded one).
        public var busy = false
    }

    /// Where an update's list comes from.
    public enum ListSource: Sendable {
        /// Fetched from the store's URL.
        case server
        /// A static list the operator carried over (`pinkeeper import`, air-gapped hosts): verified
        /// and merged exactly like a fetched one. A failure is reported but not recorded: the
        /// operator's file says nothing about the store's server, and must not delay its retries.
        case file(path: String, body: Data)
    }

    public func update(_ store: StoreConfig, from source: ListSource = .server) async -> Report {
        // One writer per store: the daemon and a manual `pinkeeper update` take turns.
        let lock: StoreLock?, lockFailure: FileError?
        switch await StoreLock.acquire(store: store.id, in: state.path, waiting: lockWait) {
        case .success(let held): (lock, lockFailure) = (held, nil)
        case .failure(.unavailable(let error)): (lock, lockFailure) = (nil, error)
        case .failure(.busy): return busy(store)
        }
        defer { lock?.release() }
        let now = clock.now()
        let loaded = await readPublished(store, holding: lock, now: now)
        var record = loaded.record
        record.lastAttempt = now
        if probeRefresh { record.countProbeRefresh() }
        // An import fetches nothing: the next start must still see settings no fetch has used yet.
        if case .server = source { record.fetchSettings = await BlockingWork.run { FetchSettings.digest(of: store) } }
        let validBefore = loaded.published?.list.pins.filter { !$0.isExpired(at: now) } ?? []
        var validNow = validBefore
        var inPlace = loaded.published  // the file readers have after this attempt
        var replaced = false  // renamed into place although the attempt failed (its directory's fsync)
        do throws(UpdateFailure) {
            if let lockFailure { throw UpdateFailure(.writeFailed, "\(lockFailure); the published file was left as it was") }
            if let refusal = loaded.refusal { throw refusal }
            let plan = try await fetchAndPublish(store, from: source, published: loaded.published, record: record, now: now)
            record.listDigest = noteServedList(plan.listDigest, previous: record.listDigest, store: store)
            if plan.unlisted > 0 { warnUnlisted(store, dropped: plan.unlisted, pins: plan.pins.count) }
            if plan.published {
                announceChange(store, before: validBefore, after: plan.pins)
                await syncEnvoySecrets(store, now: now)
            }
            if let unsynced = plan.unsynced {
                (validNow, inPlace, replaced) = (plan.pins, plan.file, true)  // in place, though perhaps not durable
                throw unsynced
            }
            if let empty = plan.emptyStore {
                validNow = []  // published: readers answer empty, as the server's list says
                throw empty
            }
            return await succeeded(store, plan, record: record, source: source, now: now)
        } catch let error where Task.isCancelled {
            // Shutdown, not a failure of the server: no back-off, no state change.
            logger.info("update interrupted by shutdown", metadata: ["store": "\(store.id)"])
            return Report(store: store.id, result: error.result, reason: "interrupted", pins: validBefore.count, nextAttempt: now)
        } catch {
            if case .file = source {
                return rejectedImport(
                    store, error, from: source, pins: validNow.count, published: inPlace,
                    replaced: replaced, record: record, now: now)
            }
            return await failed(store, error, record: record, validPins: validNow, published: inPlace, now: now)
        }
    }

    /// Another process holds the store's lock: nothing is fetched, written or counted as a failure.
    func busy(_ store: StoreConfig) -> Report {
        let now = clock.now()
        // Read only: without the lock nothing may be written, not even a copy of a corrupt file.
        let cached = (try? CacheReader.read(cacheFile: cache.filePath(for: store.id), store: store.id)) ?? nil
        var report = Report(
            store: store.id, result: state.load(store: store.id).lastResult ?? .ok, reason: "interrupted",
            pins: cached?.list.pins.filter { !$0.isExpired(at: now) }.count ?? 0, nextAttempt: now)
        guard !Task.isCancelled else { return report }  // shutdown while waiting for the lock
        report.nextAttempt = now.saturatingAdding(store.policy.retryMin)
        report.reason = "another pinkeeper process is updating the store (it holds \(StoreLock.path(store: store.id, in: state.path)))"
        report.busy = true
        logger.warning(
            "store is busy; trying again later",
            metadata: [
                "store": "\(store.id)", "reason": "\(report.reason ?? "")",
                "retry_in": "\(Units.describe(seconds: report.nextAttempt.saturatingSubtracting(now)))",
            ])
        return report
    }
}
