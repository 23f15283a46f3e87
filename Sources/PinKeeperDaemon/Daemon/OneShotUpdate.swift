import Logging
import PinKeeper

/// `pinkeeper update`: one pass over the selected stores, then exit.
public enum OneShotUpdate {
    public struct Line: Sendable {
        public var store: String
        /// `fresh` when the store was not due and `--force` was not given; `busy` when another
        /// process was updating it.
        public var result: String
        public var pins: Int
        public var nextUpdate: Int64
        public var reason: String?
        public var failed: Bool

        init(store: String, result: String, pins: Int, nextUpdate: Int64, reason: String?, failed: Bool) {
            (self.store, self.result, self.pins, self.nextUpdate, self.reason, self.failed) =
                (store, result, pins, nextUpdate, reason, failed)
        }

        /// An attempt's report (`update`, `import`); busy: another process held the store for the whole wait.
        public init(_ report: StoreUpdater.Report) {
            self.init(
                store: report.store, result: report.busy ? "busy" : report.result.rawValue, pins: report.pins,
                nextUpdate: report.nextAttempt, reason: report.reason, failed: report.busy || report.result != .ok)
        }

        /// `<store> <result> pins=N next=ISO[ reason="…"]`; `extra` fields go before the reason.
        public func text(extra: String = "") -> String {
            var text = "\(store) \(result) pins=\(pins) next=\(Timestamp.iso(nextUpdate))\(extra)"
            if let reason { text += " reason=\(LogText.quoted(reason))" }  // server text: one line
            return text
        }
    }

    public static func run(
        configuration: Configuration, storeIDs: [String], force: Bool, updater: StoreUpdater,
        clock: any WallClock = SystemClock()
    ) async -> [Line] {
        let selected = storeIDs.isEmpty ? configuration.stores : storeIDs.compactMap(configuration.store)
        let now = clock.now()
        var lines: [String: Line] = [:]
        var due: [StoreConfig] = []
        func fetchLater(_ store: StoreConfig) {
            // The first store to fetch: libcurl loads while the others are checked and caches read.
            if due.isEmpty { updater.fetcher.prepare() }
            due.append(store)
        }
        for store in selected {
            // --force updates every store, and the update reconciles under the lock: no check needed.
            guard !force else {
                fetchLater(store)
                continue
            }
            // Read only: nothing is written here without the store's lock.
            let check = updater.reconcileCheck(store, now: now)
            guard !check.fetchNow, var cache = updater.loadCache(store, now: now).0 else {
                fetchLater(store)
                continue
            }
            let state = updater.state.load(store: store.id)
            if check.needed && DueTime.of(cache: cache, state: state, policy: store.policy, now: now) > now {
                // A removed key's pins go even if the store is not due (a due one is reconciled by its update).
                switch await updater.reconcileLocked(store, now: now) {
                case .done(let reconciled?): cache = reconciled
                case .done(nil), .unavailable: fetchLater(store); continue
                case .blocked(let report): lines[store.id] = Line(report); continue
                }
            }
            let dueAt = DueTime.of(cache: cache, state: state, policy: store.policy, now: now)
            if dueAt > now {
                let pins = cache.list.pins.filter { !$0.isExpired(at: now) }.count
                let failing = state.lastResult.map { $0 != .ok } ?? false
                lines[store.id] = Line(
                    store: store.id, result: failing ? "waiting" : "fresh", pins: pins,
                    nextUpdate: dueAt, reason: failing ? state.lastReason : nil, failed: failing)
            } else {
                fetchLater(store)
            }
        }
        for report in await UpdatePass.run(due, updater: updater, concurrency: configuration.concurrency) {
            lines[report.store] = Line(report)
        }
        // A store can fail before its fetch (its lock, its cache): the process must not exit while
        // the background load of libcurl is still running.
        if !due.isEmpty { await updater.fetcher.preparationFinished() }
        return selected.compactMap { lines[$0.id] }
    }
}
