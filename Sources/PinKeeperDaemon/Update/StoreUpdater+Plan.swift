import FoundationEssentials
import PinKeeper

/// fetch → verify → merge, decided before anything is written: `update` publishes the plan,
/// `import` makes it from a file, `update --dry-run` only describes it.
extension StoreUpdater {
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
        /// What the merge gave, counts included (nil when the list was unchanged): read only by
        /// FastPathPropertyTests, which hold a static list's fast path to `PinMerger.mergeDecoded`.
        var outcome: PinMerger.Outcome?
        var published: Bool { file != nil }
        /// The file replaced the published one, but the directory fsync after the rename failed:
        /// readers use the new pins, which a power loss may still take back. Reported as a failure,
        /// so that the retry writes and syncs the file again.
        var unsynced: UpdateFailure?

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

    /// What the merge gave: the pins and `domainsConfig` to publish, how many entries arrived,
    /// the verified list's digest, and a static list's file already written beside the old one.
    struct Merge {
        var outcome: PinMerger.Outcome
        var received = 0
        var listDigest: String?
        var early: EarlyPublication?
    }

    func fetchAndPublish(
        _ store: StoreConfig, from source: ListSource, published: CacheFile?, record: StoreState, now: Int64
    ) async throws(UpdateFailure) -> Plan {
        var plan = try await plan(store, from: source, published: published, record: record, now: now, writing: true)
        guard let file = plan.file else { return plan }
        do {
            try await BlockingWork.run { [cache, prepared = plan.prepared] () throws(FileError) in
                if let prepared { try cache.commit(prepared, as: file) } else { try cache.publish(file) }
            }
        } catch let error where error.afterReplacing {
            plan.unsynced = UpdateFailure(.writeFailed, Self.unsyncedReason(error, file: cache.filePath(for: store.id)))
        } catch {
            throw UpdateFailure(.writeFailed, "\(error); the published file was left as it was")
        }
        return plan
    }

    /// A failed directory fsync after the rename: the file was replaced, so "left as it was" would be false.
    static func unsyncedReason(_ error: FileError, file: String) -> String {
        "\(file) was replaced with the new pins, which readers already use, but \(error), so a power loss may "
            + "bring back the previous file; check the file system that holds it (kernel log, disk health): "
            + "the update is retried, writing and syncing the file again"
    }

    /// `writing`: a static list's file may be written (not put in place) while it is verified.
    func plan(
        _ store: StoreConfig, from source: ListSource, published: CacheFile?, record: StoreState, now: Int64, writing: Bool = false
    ) async throws(UpdateFailure) -> Plan {
        let (exchange, received) = try await receive(store, from: source, published: published, record: record)
        var response = received
        // Static lists: the same bytes as the last verified list are as good as a 304.
        let digest = store.mode == .static && response.status == 200 ? Self.hexDigest(response.body) : nil
        let notModified =
            (response.status == 304 && exchange.isConditional)
            || (published != nil && digest != nil && digest == record.bodyDigest && record.listDigest != nil)
        if notModified { response.body = Data() }  // the same bytes: only the cached pins are needed
        var validators = store.mode == .static ? keptValidators(of: response, store: store) : (nil, nil)
        let merge: Merge
        if notModified, let published {
            merge = try Self.unchanged(published, store: store, record: record, now: now)
            if response.status == 304 { validators = (record.etag, record.lastModified) }
        } else {
            merge = try await verifyAndMerge(
                store, exchange: exchange, response: &response, published: published, record: record, now: now, writing: writing)
            warnAbout(merge.outcome, received: merge.received, store: store)
            let kept = published?.list.pins.filter { !$0.isExpired(at: now) }
            if merge.received > 0 && merge.outcome.expiredReceived == merge.received && merge.outcome.pins == kept {
                // Only expired entries: nothing to add, so the published pins stay exactly as they were.
                return Plan(
                    pins: merge.outcome.pins, file: nil, nextUpdate: nextUpdate(merge.outcome.pins, store, published, now),
                    validators: validators, bodyDigest: digest, notModified: false,
                    ignoredUnsignedFields: merge.outcome.ignoredUnsignedFields, listDigest: merge.listDigest, outcome: merge.outcome)
            }
        }
        let next = merge.early?.nextUpdate ?? nextUpdate(merge.outcome.pins, store, published, now)
        let file = CacheFile(
            list: PinList(pins: merge.outcome.pins, domainsConfig: merge.outcome.domainsConfig),
            metadata: .init(store: store.id, source: store.url, updated: now, nextUpdate: next, mode: store.mode))
        return Plan(
            pins: merge.outcome.pins, file: file, nextUpdate: next, validators: validators,
            bodyDigest: digest ?? record.bodyDigest, notModified: notModified,
            ignoredUnsignedFields: merge.outcome.ignoredUnsignedFields, unlisted: merge.outcome.unlisted,
            listDigest: merge.listDigest, prepared: await merge.early?.file.value, outcome: notModified ? nil : merge.outcome)
    }

    /// The request and its response: from the server, or an operator's file standing in for an
    /// unconditional 200 without headers (a file has no validators to remember).
    private func receive(
        _ store: StoreConfig, from source: ListSource, published: CacheFile?, record: StoreState
    ) async throws(UpdateFailure) -> (ListExchange, HTTPResponse) {
        switch source {
        case .server:
            let exchange = try ListExchange(store: store, previous: published, memory: record)
            return (exchange, try await fetcher.fetch(exchange.request))
        case .file(_, let body):
            guard store.mode == .static else {
                throw UpdateFailure(
                    .invalidData,
                    "a challenge-mode store takes no list from a file"
                        + ": only the server's signature over a fresh challenge shows a list is current"
                )
            }
            return (
                try ListExchange(store: store, previous: nil, memory: StoreState()), HTTPResponse(status: 200, headers: [:], body: body)
            )
        }
    }

    /// Nothing changed on the server: no parsing, no verification, the cached pins published again.
    private static func unchanged(_ published: CacheFile, store: StoreConfig, record: StoreState, now: Int64) throws(UpdateFailure) -> Merge
    {
        let pins = published.list.pins.filter { !$0.isExpired(at: now) }
        guard !pins.isEmpty else { throw UpdateFailure(.storeEmpty, "the list is unchanged and every cached pin has expired") }
        let outcome = PinMerger.Outcome(
            pins: pins, domainsConfig: store.mode == .challenge ? published.list.domainsConfig : nil,
            added: 0, expiredReceived: 0, unexpectedNames: [])
        return Merge(outcome: outcome, listDigest: record.listDigest)
    }

    private func verifyAndMerge(
        _ store: StoreConfig, exchange: ListExchange, response: inout HTTPResponse, published: CacheFile?, record: StoreState,
        now: Int64, writing: Bool
    ) async throws(UpdateFailure) -> Merge {
        let merger = PinMerger(
            mode: store.mode, verifier: SignatureVerifier(keys: store.publicKeys),
            expectedCommonNames: store.expectedCommonNames, authoritative: store.policy.authoritative)
        guard store.mode == .static else {
            let (list, signedBy) = try exchange.verifiedList(from: response, now: now)
            response.body = Data()
            let outcome = try merger.merge(cached: published?.list.pins ?? [], received: list, responseKey: signedBy, now: now)
            return Merge(outcome: outcome, received: list.pins.count, listDigest: servedDigest(list))
        }
        // Kept compact until verified: a 100,000-entry list as `Pin`s took about 36 MB.
        // Verified from the first full chunk on, on the core the reading leaves free.
        let cached = published?.list.pins ?? []
        let verifying = merger.earlyVerification(cached: cached, now: now)
        let (entries, hadDomainsConfig) = try exchange.staticEntries(from: response, now: now, verifying: verifying)
        response.body = Data()  // parsed: not held through verification and publishing (22 MB at 100,000 entries)
        let received = entries.count  // its chunks go while the merged pins are made
        let writes = EarlyWrites()
        do {
            let result = try merger.mergeStatic(
                cached: cached, received: consume entries, hadDomainsConfig: hadDomainsConfig, now: now, digest: true,
                verifiedWhileReading: verifying,
                whileVerifying: writing ? earlyPublication(store, published: published, now: now, writes: writes) : nil)
            if result.early == nil { await writes.settle() }
            return Merge(outcome: result.outcome, received: received, listDigest: result.listDigest, early: result.early)
        } catch {
            await writes.settle()
            throw error
        }
    }

    private func nextUpdate(_ pins: [Pin], _ store: StoreConfig, _ published: CacheFile?, _ now: Int64) -> Int64 {
        NextUpdate.scheduled(
            pins: pins, now: now, policy: store.policy, random: random, catchingUp: Self.isCatchUp(published, store: store, now: now))
    }
}
