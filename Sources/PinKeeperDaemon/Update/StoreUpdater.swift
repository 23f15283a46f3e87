import FoundationEssentials
import Logging
import PinKeeper

/// One update of one store, top to bottom: fetch → verify → merge → publish → remember.
/// Any failure leaves the published file untouched and schedules a retry with back-off.
public struct StoreUpdater: Sendable {
    public var fetcher: HTTPFetching
    public var cache: CacheDirectory
    public var state: StateDirectory
    public var clock: WallClock
    public var random: RandomSource
    public var logger: Logger
    /// How long to wait for another process's update of the same store before reporting it busy.
    public var lockWait: Duration = .seconds(5)
    /// Runs a store's `on_change` hook after a publish that changed its pins (nil: never).
    public var hooks: ChangeHooks?
    /// Rewrites the store's Envoy secrets after a publish (nil: no `envoy_sds_directory`).
    public var envoy: EnvoySecretSync?

    public init(
        fetcher: HTTPFetching, cache: CacheDirectory, state: StateDirectory,
        clock: WallClock = SystemClock(), random: RandomSource = SystemRandom(), logger: Logger
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
        // File work runs on threads of its own (BlockingWork): a stalled disk must not starve the pool.
        // Without the lock nothing is written: another process may be publishing the store.
        // One thread reads both files (the state after the reconcile, which may save it).
        let (previous, refusal, reconciled, saved) = await BlockingWork.run { [state] () -> (CacheFile?, UpdateFailure?, Bool, StoreState) in
            guard let lock else {
                let (found, refusal) = loadCache(store, now: now)
                return (found, refusal, false, state.load(store: store.id))
            }
            cache.removeStaleTemps(for: store.id)
            let result = reconcileCache(store, now: now, holding: lock)
            return (result.cache, result.refusal, result.changed, state.load(store: store.id))
        }
        var memory = saved
        if reconciled { memory.forgetValidators() }  // already on disk, unless that save failed
        let validBefore = previous?.list.pins.filter { !$0.isExpired(at: now) } ?? []
        var validNow = validBefore

        memory.lastAttempt = now
        do throws(UpdateFailure) {
            if let lockFailure { throw UpdateFailure(.writeFailed, "\(lockFailure); the published file was left as it was") }
            if let refusal { throw refusal }
            let outcome = try await fetchAndPublish(store, from: source, previous: previous, memory: memory, now: now)
            memory.listDigest = noteServedList(outcome.listDigest, previous: memory.listDigest, store: store)
            if outcome.unlisted > 0 { warnUnlisted(store, dropped: outcome.unlisted, pins: outcome.pins.count) }
            if outcome.published {
                announceChange(store, before: validBefore, after: outcome.pins)
                await syncEnvoySecrets(store, now: now)
            }
            if let empty = outcome.emptyStore {
                validNow = []  // published: readers answer empty, as the server's list says
                throw empty
            }
            memory.lastResult = .ok
            memory.lastReason = nil
            memory.lastSuccess = now
            memory.authoritative = store.policy.authoritative
            memory.consecutiveFailures = 0
            // When the file was left as it was, its nextUpdate is stale: remember the new one here.
            memory.retryAt = outcome.published ? nil : outcome.nextUpdate
            (memory.etag, memory.lastModified) = outcome.validators
            memory.bodyDigest = outcome.bodyDigest
            await BlockingWork.run { [memory] in remember(memory, store) }
            logger.info(
                "update succeeded",
                metadata: [
                    "event": "\(LogEventID.updateSucceeded.rawValue)", "store": "\(store.id)", "result": "ok", "pins": "\(outcome.pins.count)",
                    "next_update": "\(Timestamp.iso(outcome.nextUpdate))", "not_modified": "\(outcome.notModified)",
                ].merging(source.logMetadata) { $1 })
            warnIfExpiring(store, pins: outcome.pins, now: now)
            return Report(
                store: store.id, result: .ok, pins: outcome.pins.count, nextAttempt: outcome.nextUpdate,
                notModified: outcome.notModified)
        } catch let error where Task.isCancelled {
            // Shutdown, not a failure of the server: no back-off, no state change.
            logger.info("update interrupted by shutdown", metadata: ["store": "\(store.id)"])
            return Report(
                store: store.id, result: error.result, reason: "interrupted", pins: validBefore.count,
                nextAttempt: now)
        } catch {
            if case .file = source {
                return rejectedImport(store, error, from: source, pins: validNow.count, previous: previous, memory: memory, now: now)
            }
            memory.lastResult = error.result
            memory.lastReason = error.reason
            memory.consecutiveFailures = memory.consecutiveFailures.addingReportingOverflow(1).overflow ? Int.max : memory.consecutiveFailures + 1
            let retry = Backoff.retryAt(
                now: now, failures: memory.consecutiveFailures, policy: store.policy,
                retryAfter: error.retryAfter, regularUpdate: previous?.metadata.nextUpdate,
                random: random)
            memory.retryAt = retry
            await BlockingWork.run { [memory] in remember(memory, store) }
            let event: LogEventID = error.result == .storeEmpty ? .storeEmpty : .updateFailed
            logger.error(
                "update failed",
                metadata: [
                    "event": "\(event.rawValue)", "store": "\(store.id)", "result": "\(error.result.rawValue)", "reason": "\(error.reason)",
                    "pins": "\(validNow.count)", "next_update": "\(Timestamp.iso(retry))",
                    "retry_in": "\(Units.describe(seconds: retry.saturatingSubtracting(now)))",
                ])
            warnIfExpiring(store, pins: validNow, now: now)
            return Report(
                store: store.id, result: error.result, reason: error.reason, pins: validNow.count,
                nextAttempt: retry)
        }
    }

    /// The cached pins to merge with, or why the store must not be published at all.
    /// `keepingCopy`: copy a corrupt file aside; only under the store's lock (readers, the loop and
    /// dry runs write nothing).
    func loadCache(_ store: StoreConfig, now: Int64, keepingCopy: Bool = false) -> (CacheFile?, UpdateFailure?) {
        switch cache.load(store: store.id, now: now, keepingCopy: keepingCopy) {
        case .missing: return (nil, nil)
        case .valid(let file): return (file, nil)
        case .corrupt(let reason, let copy):
            // It stays in place until a verified update replaces it: readers keep their last good pins.
            logger.warning(
                "cache file cannot be used; updating the store as if it had no cached pins",
                metadata: [
                    "store": "\(store.id)", "file": "\(cache.filePath(for: store.id))", "reason": "\(reason)",
                    "copy": "\(copy ?? "(none kept)")",
                ])
            return (nil, nil)
        case .newerFormat(let format):
            return (
                nil,
                UpdateFailure(
                    .writeFailed,
                    """
                    \(cache.filePath(for: store.id)) has cache format \(format), newer than this pinkeeper's \
                    \(CacheFile.formatVersion); it is left untouched so that a downgrade cannot destroy it \
                    (upgrade pinkeeper, or remove the file to start afresh)
                    """)
            )
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

    /// Once per update: the common name whose newest pin expires first, if that is inside
    /// `expiration_update_threshold` (no replacement has been published yet).
    private func warnIfExpiring(_ store: StoreConfig, pins: [Pin], now: Int64) {
        guard let soonest = ExpiringPins.soonest(pins, now: now),
            soonest.expires.saturatingSubtracting(now) < store.policy.expirationUpdateThreshold
        else { return }
        logger.warning(
            "pins expiring without a replacement",
            metadata: [
                "event": "\(LogEventID.pinsExpiring.rawValue)", "store": "\(store.id)", "name": "\(soonest.name)",
                "expires": "\(Timestamp.iso(soonest.expires))", "expires_in": "\(Units.describe(seconds: soonest.expires.saturatingSubtracting(now)))",
            ])
    }

    /// Authoritative: one warning per update that dropped pins the verified response no longer lists.
    private func warnUnlisted(_ store: StoreConfig, dropped: Int, pins: Int) {
        logger.warning(
            "dropped pins the pinning service no longer lists",
            metadata: [
                "event": "\(LogEventID.pinsDropped.rawValue)", "store": "\(store.id)", "dropped": "\(dropped)", "pins": "\(pins)",
                "cause": "unlisted",
            ])
    }

    private func remember(_ memory: StoreState, _ store: StoreConfig) {
        do {
            try state.save(memory, store: store.id)
        } catch {
            logger.warning(
                "cannot save store state; back-off will not survive a restart",
                metadata: [
                    "store": "\(store.id)", "reason": "\(error)",
                ])
        }
    }

    /// What an update would publish, decided before anything is written: fetch → verify →
    /// merge. `update` publishes it (`fetchAndPublish`); `dryRun` only describes it.
    struct Plan {
        /// The store's valid pins after the update, in published order.
        var pins: [Pin]
        /// The file to publish; nil when the response added nothing and the published file is
        /// left byte-identical.
        var file: CacheFile?
        var nextUpdate: Int64
        var validators: (etag: String?, lastModified: String?)
        var bodyDigest: String?
        var notModified: Bool
        /// A static list carried `depth` or `domainsConfig`, which were dropped.
        var ignoredUnsignedFields = false
        /// Authoritative: valid pins dropped because the verified response no longer lists them.
        var unlisted = 0
        /// `ListDigest` of the verified list; after a 304 or the same static body, the remembered one.
        var listDigest: String?
        /// `file`, already written beside the published one while the list was verified (static
        /// lists), to be put in its place instead of written again.
        var prepared: AtomicWriter.PreparedFile?
        var published: Bool { file != nil }

        /// Only an authoritative store can end up without pins: the server's verified list named
        /// none valid. The update publishes that and reports the store empty.
        var emptyStore: UpdateFailure? {
            guard pins.isEmpty else { return nil }
            return UpdateFailure(
                .storeEmpty,
                "the verified list names no unexpired pin and the store is authoritative: "
                    + (unlisted > 0 ? "its \(unlisted) pins were dropped" : "no pin is kept") + " and every validation answers empty")
        }
    }

    private func fetchAndPublish(
        _ store: StoreConfig, from source: ListSource, previous: CacheFile?, memory: StoreState,
        now: Int64
    ) async throws(UpdateFailure) -> Plan {
        let plan = try await plan(store, from: source, previous: previous, memory: memory, now: now, writing: true)
        guard let file = plan.file else { return plan }
        do {
            try await BlockingWork.run { [cache, prepared = plan.prepared] () throws(FileError) in
                if let prepared { try cache.commit(prepared, as: file) } else { try cache.publish(file) }
            }
        } catch {
            throw UpdateFailure(.writeFailed, "\(error); the published file was left as it was")
        }
        return plan
    }

    /// `writing`: a static list's file may be written (not put in place) while it is verified.
    func plan(_ store: StoreConfig, from source: ListSource, previous: CacheFile?, memory: StoreState, now: Int64, writing: Bool = false)
        async throws(UpdateFailure) -> Plan
    {
        let exchange: ListExchange
        var response: HTTPResponse
        switch source {
        case .server:
            exchange = try ListExchange(store: store, previous: previous, memory: memory)
            response = try await fetcher.fetch(exchange.request)
        case .file(_, let body):
            guard store.mode == .static else {
                throw UpdateFailure(.invalidData, "a challenge-mode store takes no list from a file: only the server's signature over a fresh challenge shows a list is current")
            }
            // An unconditional 200 without headers: a file has no validators to remember.
            exchange = try ListExchange(store: store, previous: nil, memory: StoreState())
            response = HTTPResponse(status: 200, headers: [:], body: body)
        }
        let merged: PinMerger.Outcome
        // Static lists: the same bytes as the last verified list are as good as a 304.
        let digest = store.mode == .static && response.status == 200 ? Self.hexDigest(response.body) : nil
        let notModified =
            (response.status == 304 && exchange.isConditional)
            || (previous != nil && digest != nil && digest == memory.bodyDigest && memory.listDigest != nil)
        if notModified { response.body = Data() }  // the same bytes: only the cached pins are needed
        var listDigest = memory.listDigest
        var earlyFile: EarlyPublication?
        var validators = store.mode == .static ? keptValidators(of: response, store: store) : (nil, nil)
        if notModified, let previous {
            // Nothing changed on the server: no parsing, no verification, just re-publish.
            let pins = previous.list.pins.filter { !$0.isExpired(at: now) }
            guard !pins.isEmpty else { throw UpdateFailure(.storeEmpty, "the list is unchanged and every cached pin has expired") }
            merged = PinMerger.Outcome(
                pins: pins, domainsConfig: store.mode == .challenge ? previous.list.domainsConfig : nil,
                added: 0, expiredReceived: 0, unexpectedNames: [])
            if response.status == 304 { validators = (memory.etag, memory.lastModified) }
        } else {
            let merger = PinMerger(
                mode: store.mode, verifier: SignatureVerifier(keys: store.publicKeys),
                expectedCommonNames: store.expectedCommonNames, authoritative: store.policy.authoritative)
            let received: Int
            if store.mode == .static {
                // Kept compact until verified: a 100,000-entry list as `Pin`s took about 36 MB.
                // Verified from the first full chunk on, on the core the reading leaves free.
                let cached = previous?.list.pins ?? []
                let verifying = merger.earlyVerification(cached: cached, now: now)
                let (entries, hadDomainsConfig) = try exchange.staticEntries(from: response, now: now, verifying: verifying)
                response.body = Data()  // parsed: not held through verification and publishing (22 MB at 100,000 entries)
                received = entries.count  // its chunks go while the merged pins are made
                let writes = EarlyWrites()
                do {
                    let result = try merger.mergeStatic(
                        cached: cached, received: consume entries, hadDomainsConfig: hadDomainsConfig, now: now, digest: true,
                        verifiedWhileReading: verifying,
                        whileVerifying: writing ? earlyPublication(store, previous: previous, now: now, writes: writes) : nil)
                    (merged, listDigest, earlyFile) = (result.outcome, result.listDigest, result.early)
                } catch {
                    await writes.settle()
                    throw error
                }
                if earlyFile == nil { await writes.settle() }
            } else {
                let (list, signedBy) = try exchange.verifiedList(from: response, now: now)
                response.body = Data()
                received = list.pins.count
                merged = try merger.merge(cached: previous?.list.pins ?? [], received: list, responseKey: signedBy, now: now)
                listDigest = servedDigest(list)
            }
            warnAbout(merged, received: received, store: store)
            let keptPins = previous?.list.pins.filter { !$0.isExpired(at: now) }
            if received > 0 && merged.expiredReceived == received && merged.pins == keptPins {
                // Only expired entries: nothing to add, so the published pins stay exactly as they were.
                let next = NextUpdate.scheduled(
                    pins: merged.pins, now: now, policy: store.policy, random: random,
                    catchingUp: Self.isCatchUp(previous, store: store, now: now))
                return Plan(
                    pins: merged.pins, file: nil, nextUpdate: next, validators: validators, bodyDigest: digest,
                    notModified: false, ignoredUnsignedFields: merged.ignoredUnsignedFields, listDigest: listDigest)
            }
        }
        let next =
            earlyFile?.nextUpdate
            ?? NextUpdate.scheduled(
                pins: merged.pins, now: now, policy: store.policy, random: random,
                catchingUp: Self.isCatchUp(previous, store: store, now: now))
        let file = CacheFile(
            list: PinList(pins: merged.pins, domainsConfig: merged.domainsConfig),
            metadata: .init(store: store.id, source: store.url, updated: now, nextUpdate: next, mode: store.mode))
        let prepared = await earlyFile?.file.value
        return Plan(
            pins: merged.pins, file: file, nextUpdate: next, validators: validators,
            bodyDigest: digest ?? memory.bodyDigest, notModified: notModified,
            ignoredUnsignedFields: merged.ignoredUnsignedFields, unlisted: merged.unlisted, listDigest: listDigest,
            prepared: prepared)
    }

    /// The next update and the file of a static list, made while its new entries are verified.
    struct EarlyPublication: Sendable {
        var nextUpdate: Int64
        /// Written on a thread of its own and awaited by `plan`, so that the merge (on the pool)
        /// never waits for the disk; nil if it could not be written (the publish after the
        /// verification then reports why).
        var file: Task<AtomicWriter.PreparedFile?, Never>
    }

    /// `plan`'s schedule and file for the pins of `preview`, as they are made after the merge.
    private func earlyPublication(_ store: StoreConfig, previous: CacheFile?, now: Int64, writes: EarlyWrites)
        -> @Sendable (PinMerger.StaticPreview) -> EarlyPublication
    {
        let catchingUp = Self.isCatchUp(previous, store: store, now: now)
        return { [cache, random] preview in
            let next = NextUpdate.scheduled(of: preview, now: now, policy: store.policy, random: random, catchingUp: catchingUp)
            let metadata = CacheFile.Metadata(store: store.id, source: store.url, updated: now, nextUpdate: next, mode: store.mode)
            let file = Task.detached {
                await BlockingWork.run { try? cache.prepare(pins: preview.pins, domainsConfig: nil, metadata: metadata) }
            }
            writes.started(file)
            return EarlyPublication(nextUpdate: next, file: file)
        }
    }

    /// The response's `ETag` and `Last-Modified`, each only if it may be sent back as it is: an
    /// invalid one is not kept, and the next request is not conditional on it.
    private func keptValidators(of response: HTTPResponse, store: StoreConfig) -> (etag: String?, lastModified: String?) {
        let etag = response.header("etag"), lastModified = response.header("last-modified")
        var refused: Logger.Metadata = [:]
        if let etag, !ValidatorFields.isValidETag(etag) { refused["etag"] = "\(etag)" }
        if let lastModified, !ValidatorFields.isValidLastModified(lastModified) { refused["last_modified"] = "\(lastModified)" }
        if !refused.isEmpty {
            logger.debug(
                "the server sent a validator that is no valid header value; it is not sent back",
                metadata: [
                    "store": "\(store.id)"
                ].merging(refused) { $1 })
        }
        return (refused["etag"] == nil ? etag : nil, refused["last_modified"] == nil ? lastModified : nil)
    }

    static func hexDigest(_ body: Data) -> String {
        lowerHex(body.withUnsafeBytes { SHA256.digest($0) })
    }

    /// A catch-up update: nothing valid was cached, or the update is later than planned by more
    /// than the splay window (after downtime or an outage, when a whole fleet may re-synchronise).
    static func isCatchUp(_ previous: CacheFile?, store: StoreConfig, now: Int64) -> Bool {
        let hasValidPins = previous?.list.pins.contains { !$0.isExpired(at: now) } ?? false
        return NextUpdate.isCatchUp(planned: hasValidPins ? previous?.metadata.nextUpdate : nil, now: now, policy: store.policy)
    }

    private func warnAbout(_ outcome: PinMerger.Outcome, received: Int, store: StoreConfig) {
        if received > 0 && outcome.expiredReceived == received {
            logger.warning(
                "the list holds only expired entries; nothing was added",
                metadata: [
                    "store": "\(store.id)", "entries": "\(received)",
                ])
        }
        if outcome.ignoredUnsignedFields {
            logger.warning(
                "the static list carries depth or domainsConfig, which its signatures do not cover; both are ignored",
                metadata: [
                    "store": "\(store.id)"
                ])
        }
        if !outcome.unexpectedNames.isEmpty {
            logger.warning(
                "the list pins common names outside expected_common_names",
                metadata: [
                    "store": "\(store.id)", "names": "\(outcome.unexpectedNames.joined(separator: ","))",
                ])
        }
    }
}
