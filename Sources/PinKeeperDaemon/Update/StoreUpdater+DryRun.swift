import PinKeeper

extension StoreUpdater {
    /// What an update of one store would do, described instead of done.
    public struct Preview: Sendable, Equatable {
        public var store: String
        public var result: UpdateResult
        public var reason: String?
        /// Valid pins the store would have afterwards.
        public var pins: Int
        /// When the store would be tried next (regular update or retry).
        public var nextAttempt: Int64
        /// Against the published file as it is now.
        public var changes: PinChanges
        /// Static mode: the list or the published file carries unsigned `depth`/`domainsConfig`,
        /// which would be dropped.
        public var ignoredUnsignedFields = false
    }

    /// `pinkeeper update --dry-run`: fetch, verify and merge exactly as `update` does (`plan`),
    /// then describe the result. Writes nothing: no lock file, no stale-temp cleanup, no
    /// reconciled file (a removed key's pins are counted as dropped instead), no state, no copy
    /// of a corrupt file. Nothing is locked either, so it never waits for a running update.
    public func dryRun(_ store: StoreConfig) async -> Preview {
        let now = clock.now()
        var memory = await BlockingWork.run { [state] in state.load(store: store.id) }
        let (loaded, refusal) = await BlockingWork.run { loadCache(store, now: now) }
        // What reconcileCache would publish before the fetch, kept in memory; it would forget the validators too.
        let reconciliation = loaded.map { CachedPins.reconcile($0, store: store) }
        if reconciliation?.changed == true { memory.forgetValidators() }
        let reconciled = reconciliation?.file
        let published = loaded?.list.pins ?? []
        let cachedUnsigned = reconciliation?.ignoredUnsignedFields ?? false
        do throws(UpdateFailure) {
            if let refusal { throw refusal }
            let plan = try await plan(store, from: .server, published: reconciled, record: memory, now: now)
            let after = plan.file?.list.pins ?? reconciled?.list.pins ?? []
            var preview = Preview(
                store: store.id, result: .ok, pins: plan.pins.count, nextAttempt: plan.nextUpdate,
                changes: PinChanges(published: published, after: after, now: now),
                ignoredUnsignedFields: plan.ignoredUnsignedFields || cachedUnsigned)
            if let empty = plan.emptyStore {
                // An authoritative store the server emptied: published so, then retried like a failure.
                (preview.result, preview.reason) = (empty.result, empty.reason)
                preview.nextAttempt = retryAt(after: memory, regularUpdate: reconciled?.metadata.nextUpdate, store: store, now: now)
            }
            return preview
        } catch {
            // A failed update still publishes the reconciled file (except over a newer format).
            let after = refusal == nil ? reconciled?.list.pins ?? [] : published
            let retry = retryAt(
                after: memory, retryAfter: error.retryAfter, regularUpdate: reconciled?.metadata.nextUpdate, store: store, now: now)
            return Preview(
                store: store.id, result: error.result, reason: error.reason,
                pins: after.filter { !$0.isExpired(at: now) }.count, nextAttempt: retry,
                changes: PinChanges(published: published, after: after, now: now),
                ignoredUnsignedFields: refusal == nil && cachedUnsigned)
        }
    }

    /// When the update this preview describes would be retried: one more failure than recorded.
    private func retryAt(after memory: StoreState, retryAfter: Int64? = nil, regularUpdate: Int64?, store: StoreConfig, now: Int64) -> Int64
    {
        Backoff.retryAt(
            now: now, failures: memory.consecutiveFailures == Int.max ? Int.max : memory.consecutiveFailures + 1, policy: store.policy,
            retryAfter: retryAfter, regularUpdate: regularUpdate, random: random)
    }
}
