public import Logging

/// The daemon's probes of some stores: runs them, logs each change of a target's outcome once
/// (with its own `MESSAGE_ID`), records the results in the state directory, and returns each
/// store's next probe time (`probe_interval` minus up to 10 % splay, as updates are splayed).
public struct ProbeRunner: Sendable {
    public var prober: Prober
    public var state: ProbeStateDirectory
    public var random: any RandomSource
    public var logger: Logger

    public init(prober: Prober, state: ProbeStateDirectory, random: any RandomSource = SystemRandom(), logger: Logger) {
        self.prober = prober
        self.state = state
        self.random = random
        self.logger = logger
    }

    /// Each store's next probe time; empty when cancelled: a probe cut short by shutdown is
    /// neither an outcome nor a change.
    public func run(_ stores: [StoreConfig], concurrency: Int) async -> [String: Int64] {
        await probe(stores, concurrency: concurrency).compactMapValues(\.next)
    }

    /// What `run` records for each store: its targets' results and its next probe time (the
    /// daemon decides from them whether a probe asks for a fetch, `ProbeRefresh`).
    public func probe(_ stores: [StoreConfig], concurrency: Int) async -> [String: StoreProbes] {
        let results = await ProbePass.run(stores, prober: prober, concurrency: concurrency)
        guard !Task.isCancelled else { return [:] }
        // Reading and writing `<store>.probes.json` is file work: on a thread of its own
        // (`BlockingWork`), so that a stalled disk holds neither the cooperative pool nor the
        // watchdog pings. Once started it records every store, even if shutdown comes meanwhile.
        return await BlockingWork.run { [self] in recordResults(results, of: stores) }
    }

    /// Each store's results with their `since` carried over, logged when an outcome changed,
    /// and saved with the store's next probe time.
    private func recordResults(_ results: [ProbePass.Result], of stores: [StoreConfig]) -> [String: StoreProbes] {
        let now = prober.clock.now()
        var next: [String: StoreProbes] = [:]
        for store in stores {
            let previous = state.load(store: store.id)
            var probes = StoreProbes()
            for result in results where result.store == store.id {
                var record = result.record
                let before = previous.record(for: record.target)
                if let before, before.outcome == record.outcome {
                    record.since = before.since
                } else {
                    log(record, previous: before?.outcome, store: store.id)
                }
                probes.targets.append(record)
            }
            probes.next = Self.nextProbe(now: now, interval: store.probe.interval, random: random)
            next[store.id] = probes
            saveOrWarn("probe results", store: store.id, otherwise: "status will not show them", logger: logger) { () throws(FileError) in
                try state.save(probes, store: store.id)
            }
        }
        return next
    }

    /// `probe_interval` minus up to 10 % splay from now, never sooner than the shortest interval.
    static func nextProbe(now: Int64, interval: Int64, random: any RandomSource) -> Int64 {
        now.saturatingAdding(max(interval - random.uniform(upTo: interval / 10), ProbeKeys.shortestInterval))
    }

    private func log(_ record: ProbeRecord, previous: ProbeOutcome?, store: String) {
        var metadata: Logger.Metadata = [
            "store": "\(store)", "target": "\(record.target)", "outcome": "\(record.outcome.rawValue)",
            "previous": "\(previous?.rawValue ?? "none")", "reason": "\(record.reason)",
        ]
        if let peer = record.peer { metadata["peer"] = "\(peer)" }
        if let fingerprint = record.leafFingerprint { metadata["leaf_fingerprint"] = "\(fingerprint)" }
        if let expires = record.leafExpires { metadata["leaf_expires"] = "\(Timestamp.iso(expires))" }
        switch record.outcome {
        case .pinned:
            metadata["event"] = "\(LogEventID.probePinned.rawValue)"
            logger.info("probed host serves a pinned certificate", metadata: metadata)
        case .unpinned:
            metadata["event"] = "\(LogEventID.probeUnpinned.rawValue)"
            logger.error("probed host serves a certificate no pin matches; clients enforcing the store fail now", metadata: metadata)
        case .expiring:
            metadata["event"] = "\(LogEventID.probeExpiring.rawValue)"
            logger.warning("probed host serves a pinned certificate whose pins run out soon", metadata: metadata)
        case .error:
            metadata["event"] = "\(LogEventID.probeError.rawValue)"
            logger.warning("probe failed; no verdict on the host's certificate", metadata: metadata)
        }
    }
}

extension ProbeRunner {
    /// Probes that read the configuration's cache directory and record in its state directory.
    public init(
        configuration: Configuration, clock: any WallClock = SystemClock(), random: any RandomSource = SystemRandom(),
        logger: Logger
    ) {
        self.init(
            prober: Prober(cacheDirectory: configuration.cacheDirectory, clock: clock),
            state: ProbeStateDirectory(path: configuration.stateDirectory), random: random, logger: logger)
    }
}
