/// Which probe results make the daemon fetch a store before its regular update, and when.
///
/// A host that serves a certificate no pin matches (`unpinned`), or one whose pins run out
/// before the store's next update (`expiring`), usually means that the host rotated and the
/// pinning service lists the new certificate already: waiting for the regular update would
/// leave the store's clients failing for days. So such a probe makes the store due at once,
/// but never sooner than `min_probe_refresh` after the last fetch a probe asked for (a host
/// the service does not list yet stays unpinned, and must not make the daemon hammer the
/// service), nor before the retry time of a failing store (its back-off holds).
///
/// Pure: the loop feeds it probe results, update reports and the due times, and applies the
/// due times it returns.
struct ProbeRefresh {
    /// The probe that asks for a fetch.
    struct Cause: Equatable, Sendable {
        var target: String
        var outcome: ProbeOutcome
        /// `expiring`: when the served chain's pins run out; it asks only while the store's next
        /// update comes later.
        var trustedUntil: Int64?

        func asks(nextUpdate: Int64?) -> Bool {
            switch outcome {
            case .unpinned: true
            case .expiring: (nextUpdate ?? Int64.max) > (trustedUntil ?? Int64.max)
            case .pinned, .error: false
            }
        }
    }

    /// A fetch a probe moved forward that has not started: the due time it replaced (given back
    /// if the probe stops asking first) and the cause the journal names when it starts.
    struct Pending: Equatable {
        var cause: Cause
        var dueBefore: Int64?
    }

    /// Per store, the latest probe results' strongest candidate cause.
    private(set) var causes: [String: Cause] = [:]
    private(set) var pending: [String: Pending] = [:]
    /// When the store's service was last asked: a fetch a probe asked for started, or any
    /// update ended (a regular one that just found nothing new answers the probe as well).
    private(set) var lastFetch: [String: Int64] = [:]
    /// The retry time of a store whose last update failed: no fetch a probe asks for comes sooner.
    private(set) var backoff: [String: Int64] = [:]

    /// The candidate cause among a store's probe results: an unpinned target first (clients fail
    /// now), else the expiring one whose pins run out first.
    static func candidate(_ targets: [ProbeRecord]) -> Cause? {
        if let unpinned = targets.first(where: { $0.outcome == .unpinned }) {
            return Cause(target: unpinned.target, outcome: .unpinned)
        }
        let expiring = targets.filter { $0.outcome == .expiring && $0.trustedUntil != nil }
        guard let soonest = expiring.min(by: { ($0.trustedUntil ?? 0) < ($1.trustedUntil ?? 0) }) else { return nil }
        return Cause(target: soonest.target, outcome: .expiring, trustedUntil: soonest.trustedUntil)
    }

    /// A probe pass's results for `store`.
    mutating func probed(_ store: String, targets: [ProbeRecord]) {
        causes[store] = Self.candidate(targets)
    }

    /// The retry time recorded before the daemon started, when the store's last update failed.
    mutating func restore(_ store: String, retryAt: Int64?) {
        backoff[store] = retryAt
    }

    /// An update ended. A failure's retry time becomes the floor of any fetch a probe asks for;
    /// a success lifts it; either way the next fetch a probe asks for waits `min_probe_refresh`
    /// from now. Reports without a retry ahead (shutdown, a store a reload took out of the
    /// pass) fetched nothing and change nothing. A published list voids the probe's verdict
    /// until the store is probed again, which the loop does at once.
    mutating func updated(_ store: String, failed: Bool, nextAttempt: Int64, published: Bool, now: Int64) {
        guard !failed || nextAttempt > now else { return }
        backoff[store] = failed ? nextAttempt : nil
        lastFetch[store] = max(lastFetch[store] ?? now, now)
        if published { causes[store] = nil }
    }

    /// When a probe's fetch of `store` may start: now, or `minInterval` after its last one, or
    /// at the end of its back-off, whichever is latest.
    func earliest(_ store: String, minInterval: Int64, now: Int64) -> Int64 {
        var at = now
        if let last = lastFetch[store] { at = max(at, last.saturatingAdding(minInterval)) }
        if let floor = backoff[store] { at = max(at, floor) }
        return at
    }

    /// The due times to set: a store whose probe asks for a fetch becomes due at `earliest`
    /// when that comes before its due time; a store whose probe stopped asking before its fetch
    /// started gets its former due time back. `stores`: each probed store with its
    /// `min_probe_refresh`.
    mutating func plan(_ stores: [(id: String, minInterval: Int64)], due: [String: Int64], now: Int64) -> [String: Int64] {
        var changes: [String: Int64] = [:]
        for (id, minInterval) in stores {
            guard let cause = causes[id], cause.asks(nextUpdate: pending[id]?.dueBefore ?? due[id]) else {
                if let before = pending.removeValue(forKey: id), let time = before.dueBefore { changes[id] = time }
                continue
            }
            pending[id]?.cause = cause
            let at = earliest(id, minInterval: minInterval, now: now)
            guard at < (due[id] ?? Int64.max) else { continue }
            pending[id] = Pending(cause: cause, dueBefore: pending[id]?.dueBefore ?? due[id])
            changes[id] = at
        }
        return changes
    }

    /// A pass starts with `stores`: the ones a probe asked for are returned with their cause,
    /// and the next such fetch of each waits `min_probe_refresh` from now.
    mutating func starting(_ stores: [String], now: Int64) -> [String: Cause] {
        var started: [String: Cause] = [:]
        for id in stores {
            guard let fetch = pending.removeValue(forKey: id) else { continue }
            started[id] = fetch.cause
            lastFetch[id] = now
        }
        return started
    }

    /// Something else set the store's due time (SIGUSR1, a reload): the fetch is no longer the probe's.
    mutating func overridden(_ store: String) {
        pending[store] = nil
    }

    /// After a reload: stores no longer configured are forgotten.
    mutating func retain(_ stores: Set<String>) {
        for id in Set(causes.keys).union(pending.keys).union(lastFetch.keys).union(backoff.keys) where !stores.contains(id) {
            causes[id] = nil
            pending[id] = nil
            lastFetch[id] = nil
            backoff[id] = nil
        }
    }
}
