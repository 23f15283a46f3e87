import Logging
import PinKeeper

/// The loop's side of `ProbeRefresh`: probe results and update reports in, due times out, and
/// one journal line for each fetch a probe caused.
extension DaemonLoop {
    /// A probe pass ended with these results.
    mutating func probesRecorded(_ results: [String: StoreProbes]) {
        for (store, probes) in results where config.store(store) != nil {
            probeRefresh.probed(store, targets: probes.targets)
        }
        planProbeRefreshes()
    }

    /// An update pass ended: failures keep their back-off, published lists wait for the next probe.
    mutating func updatesRecorded(_ reports: [StoreUpdater.Report]) {
        let now = daemon.clock.now()
        for report in reports where config.store(report.store) != nil {
            probeRefresh.updated(
                report.store, failed: report.result != .ok || report.busy, nextAttempt: report.nextAttempt,
                published: report.result == .ok && !report.notModified, now: now)
        }
        planProbeRefreshes()
    }

    /// Moves forward the due time of each store a probe asks a fetch for. Not while a pass runs:
    /// its reports may change the due times and the back-off, and it is planned again after it.
    mutating func planProbeRefreshes() {
        guard pass == nil else { return }
        let stores = config.stores.filter { !$0.probe.targets.isEmpty }.map { (id: $0.id, minInterval: $0.probe.minRefresh) }
        for (store, time) in probeRefresh.plan(stores, due: due, now: daemon.clock.now()) { due[store] = time }
    }

    /// The stores of a starting pass that a probe asked for: logged, and counted by the update.
    mutating func probeRefreshesStarting(_ stores: [StoreConfig]) -> Set<String> {
        let started = probeRefresh.starting(stores.map(\.id), now: daemon.clock.now())
        for store in stores {
            guard let cause = started[store.id] else { continue }
            var metadata: Logger.Metadata = [
                "event": "\(LogEventID.probeRefresh.rawValue)", "store": "\(store.id)", "target": "\(cause.target)",
                "outcome": "\(cause.outcome.rawValue)", "min_probe_refresh": "\(Units.describe(seconds: store.probe.minRefresh))",
            ]
            if let until = cause.trustedUntil { metadata["pinned_until"] = "\(Timestamp.iso(until))" }
            logger.info("a probe asks for the store's current pins; updating it now", metadata: metadata)
        }
        return Set(started.keys)
    }
}
