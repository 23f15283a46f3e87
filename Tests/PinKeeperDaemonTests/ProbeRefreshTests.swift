import Testing
@testable import PinKeeperDaemon

/// `ProbeRefresh`: which probe results move a store's fetch forward, how often, and never
/// through a failing store's back-off.
@Suite("Probe refresh: fetches that probes ask for")
struct ProbeRefreshTests {
    static let minute: Int64 = 60
    static let now: Int64 = 1_000_000
    static let regular: Int64 = now + 86_400

    func record(_ target: String, _ outcome: ProbeOutcome, trustedUntil: Int64? = nil) -> ProbeRecord {
        var record = ProbeRecord(target: target, outcome: outcome, checked: Self.now, reason: "test")
        record.trustedUntil = trustedUntil
        return record
    }

    func plan(_ refresh: inout ProbeRefresh, due: [String: Int64] = ["api": regular], now: Int64 = now) -> [String: Int64] {
        refresh.plan([(id: "api", minInterval: 5 * Self.minute)], due: due, now: now)
    }

    @Test("an unpinned target makes the store due now; the pass names it and counts from then")
    func unpinnedFetchesNow() {
        var refresh = ProbeRefresh()
        refresh.probed("api", targets: [record("a.test:443", .pinned), record("b.test:443", .unpinned)])
        #expect(plan(&refresh) == ["api": Self.now])
        #expect(refresh.pending["api"]?.dueBefore == Self.regular)
        let started = refresh.starting(["api", "other"], now: Self.now)
        #expect(started == ["api": .init(target: "b.test:443", outcome: .unpinned)])
        #expect(refresh.lastFetch["api"] == Self.now)
    }

    @Test("still unpinned: the next fetch waits min_probe_refresh from the last one, not a second sooner")
    func atMostOncePerInterval() {
        var refresh = ProbeRefresh()
        refresh.probed("api", targets: [record("a.test:443", .unpinned)])
        _ = plan(&refresh)
        _ = refresh.starting(["api"], now: Self.now)
        refresh.updated("api", failed: false, nextAttempt: Self.regular, published: false, now: Self.now + 1)
        #expect(plan(&refresh, now: Self.now + 1) == ["api": Self.now + 1 + 5 * Self.minute])
        // Planned again before then (another probe pass): nothing moves.
        refresh.probed("api", targets: [record("a.test:443", .unpinned)])
        #expect(plan(&refresh, due: ["api": Self.now + 1 + 5 * Self.minute], now: Self.now + 60).isEmpty)
        #expect(refresh.starting(["api"], now: Self.now + 1 + 5 * Self.minute).count == 1)
    }

    @Test("a regular update that just asked the service answers the probe too: the next fetch waits")
    func regularUpdateCounts() {
        var refresh = ProbeRefresh()
        refresh.updated("api", failed: false, nextAttempt: Self.regular, published: false, now: Self.now - 10)
        refresh.probed("api", targets: [record("a.test:443", .unpinned)])
        #expect(plan(&refresh) == ["api": Self.now - 10 + 5 * Self.minute])
        // A report of a store that never started (shutdown, a reload) fetched nothing.
        var fresh = ProbeRefresh()
        fresh.updated("api", failed: true, nextAttempt: Self.now, published: false, now: Self.now)
        fresh.probed("api", targets: [record("a.test:443", .unpinned)])
        #expect(plan(&fresh) == ["api": Self.now])
    }

    @Test("a failing store keeps its back-off: the fetch waits for its retry time, however long")
    func backoffHolds() {
        var refresh = ProbeRefresh()
        refresh.probed("api", targets: [record("a.test:443", .unpinned)])
        _ = plan(&refresh)
        _ = refresh.starting(["api"], now: Self.now)
        let retry = Self.now + 40 * Self.minute
        refresh.updated("api", failed: true, nextAttempt: retry, published: false, now: Self.now + 2)
        #expect(plan(&refresh, due: ["api": retry], now: Self.now + 10 * Self.minute).isEmpty)
        // A shutdown's report (no retry ahead) does not lift it; a success does.
        refresh.updated("api", failed: true, nextAttempt: Self.now, published: false, now: Self.now + 3)
        #expect(refresh.backoff["api"] == retry)
        refresh.updated("api", failed: false, nextAttempt: Self.regular, published: false, now: Self.now + 4)
        #expect(refresh.backoff["api"] == nil)
    }

    @Test("a back-off recorded before the start holds too")
    func restoredBackoff() {
        var refresh = ProbeRefresh()
        refresh.restore("api", retryAt: Self.now + 600)
        refresh.probed("api", targets: [record("a.test:443", .unpinned)])
        #expect(plan(&refresh) == ["api": Self.now + 600])
        #expect(plan(&refresh, due: ["api": Self.now + 600]).isEmpty)
    }

    @Test("expiring asks only while the store's next update comes after the pins run out")
    func expiring() {
        var refresh = ProbeRefresh()
        refresh.probed("api", targets: [record("a.test:443", .expiring, trustedUntil: Self.now + 1_800)])
        #expect(plan(&refresh, due: ["api": Self.now + 1_000]).isEmpty)
        #expect(plan(&refresh, due: ["api": Self.now + 3_600]) == ["api": Self.now])
        #expect(refresh.pending["api"]?.cause.trustedUntil == Self.now + 1_800)
    }

    @Test("pinned, error, or a due time already sooner: nothing moves")
    func nothingToDo() {
        var refresh = ProbeRefresh()
        refresh.probed("api", targets: [record("a.test:443", .pinned), record("b.test:443", .error)])
        #expect(plan(&refresh).isEmpty)
        refresh.probed("api", targets: [record("a.test:443", .unpinned)])
        #expect(plan(&refresh, due: ["api": Self.now - 5]).isEmpty)
        #expect(refresh.starting(["api"], now: Self.now).isEmpty)
    }

    @Test("the probe stops asking before the fetch started: the former due time comes back")
    func withdrawn() {
        var refresh = ProbeRefresh()
        refresh.probed("api", targets: [record("a.test:443", .unpinned)])
        _ = plan(&refresh)
        _ = refresh.starting(["api"], now: Self.now)
        refresh.updated("api", failed: false, nextAttempt: Self.regular, published: false, now: Self.now)
        #expect(plan(&refresh, now: Self.now + 1) == ["api": Self.now + 300])
        refresh.probed("api", targets: [record("a.test:443", .pinned)])
        #expect(plan(&refresh, due: ["api": Self.now + 300], now: Self.now + 2) == ["api": Self.regular])
        #expect(refresh.pending.isEmpty)
    }

    @Test("a published list voids the verdict; SIGUSR1 or a reload takes the fetch over; removed stores go")
    func voidedAndOverridden() {
        var refresh = ProbeRefresh()
        refresh.probed("api", targets: [record("a.test:443", .unpinned)])
        refresh.updated("api", failed: false, nextAttempt: Self.regular, published: true, now: Self.now)
        #expect(plan(&refresh).isEmpty)
        refresh.probed("api", targets: [record("a.test:443", .unpinned)])
        _ = plan(&refresh)
        refresh.overridden("api")
        #expect(refresh.starting(["api"], now: Self.now).isEmpty)
        refresh.retain(["shop"])
        #expect(refresh.causes.isEmpty && refresh.lastFetch.isEmpty && refresh.backoff.isEmpty)
    }
}
