import Foundation
import PinKeeper
import TestSupport
import Testing
@testable import PinKeeperDaemon

/// One case of `upstream/scheduler-cases.json`, with its group's parameters.
struct SchedulerCase: Sendable, CustomTestStringConvertible {
    var group: String
    var test: String
    var certificates: [(name: String, expires: Int64)]
    var now: Int64
    var expectedInterval: Double
    var policy: UpdatePolicy

    var testDescription: String { "\(group)/\(test) now=\(now)" }

    private struct File: Decodable { var groups: [Group] }
    private struct Group: Decodable {
        var name: String
        var periodicUpdateInterval: Int64
        var expirationUpdateThreshold: Int64
        var cases: [Case]
    }
    private struct Case: Decodable {
        var test: String
        var certificates: [Certificate]
        var now: Int64
        var expectedInterval: Double
    }
    /// `["name", expires]`
    private struct Certificate: Decodable {
        var name: String
        var expires: Int64
        init(from decoder: any Decoder) throws {
            var pair = try decoder.unkeyedContainer()
            name = try pair.decode(String.self)
            expires = try pair.decode(Int64.self)
        }
    }

    static let all: [SchedulerCase] = {
        guard let file = try? Vectors.decode(File.self, "upstream/scheduler-cases.json") else { return [] }
        return file.groups.flatMap { group in
            group.cases.map { item in
                var policy = UpdatePolicy()
                policy.periodicUpdateInterval = group.periodicUpdateInterval
                policy.expirationUpdateThreshold = group.expirationUpdateThreshold
                return SchedulerCase(
                    group: group.name, test: item.test,
                    certificates: item.certificates.map { ($0.name, $0.expires) },
                    now: item.now, expectedInterval: item.expectedInterval, policy: policy)
            }
        }
    }()

    /// The certificates as pins, in the order given.
    var pins: [Pin] { certificates.map { Pins.make($0.name, expires: $0.expires) } }
}

@Suite("Scheduling: next update, back-off, due time, health")
struct SchedulerTests {
    static let now: Int64 = 1_700_000_000
    static let day: Int64 = 86_400

    static func policy(retryMin: Int64 = 30, retryMax: Int64 = 3_600, periodic: Int64 = 7 * day) -> UpdatePolicy {
        var policy = UpdatePolicy()
        policy.retryMin = retryMin
        policy.retryMax = retryMax
        policy.periodicUpdateInterval = periodic
        return policy
    }

    // MARK: NextUpdate.interval (docs/protocol.md §4)

    @Test func everySchedulerCaseWasLoaded() {
        #expect(SchedulerCase.all.count == 18)
    }

    @Test(arguments: SchedulerCase.all)
    func upstreamSchedulerCase(_ item: SchedulerCase) {
        let interval = NextUpdate.interval(pins: item.pins, now: item.now, policy: item.policy)
        #expect(Double(interval) == item.expectedInterval)
    }

    // MARK: NextUpdate.scheduled (splay)

    static let splayFractions: [Double] = [0, 0.1, 0.37, 0.5, 0.99, 1]

    @Test(arguments: splayFractions)
    func splayOnlyMakesTheUpdateEarlierByAtMostTenPercent(_ fraction: Double) {
        let pins = [Pins.make("api.example.com", expires: Self.now + 30 * Self.day)]
        let policy = Self.policy()
        let interval = NextUpdate.interval(pins: pins, now: Self.now, policy: policy)
        let at = NextUpdate.scheduled(pins: pins, now: Self.now, policy: policy, random: FixedRandom(fraction: fraction))
        #expect(interval == 7 * Self.day)
        #expect(at <= Self.now + interval)
        #expect(Double(at) >= Double(Self.now) + Double(interval) * 0.9)
    }

    @Test func splayExtremes() {
        let pins = [Pins.make("api.example.com", expires: Self.now + 30 * Self.day)]
        let policy = Self.policy()
        #expect(NextUpdate.scheduled(pins: pins, now: Self.now, policy: policy, random: FixedRandom.zero) == Self.now + 604_800)
        #expect(NextUpdate.scheduled(pins: pins, now: Self.now, policy: policy, random: FixedRandom.max) == Self.now + 544_320)
    }

    @Test(arguments: [FixedRandom.zero, FixedRandom.max])
    func scheduleNeverComesSoonerThanRetryMin(_ random: FixedRandom) {
        let policy = Self.policy(retryMin: 30)
        let soon = [Pins.make("api.example.com", expires: Self.now + 60)]  // interval 60 * 0.125 ≈ 8 s
        let expired = [Pins.make("api.example.com", expires: Self.now - 1)]  // interval 0
        #expect(NextUpdate.scheduled(pins: soon, now: Self.now, policy: policy, random: random) == Self.now + 30)
        #expect(NextUpdate.scheduled(pins: expired, now: Self.now, policy: policy, random: random) == Self.now + 30)
    }

    @Test func retryMinFloorIsCappedByThePeriodicInterval() {
        let policy = Self.policy(retryMin: 30, retryMax: 60, periodic: 10)
        let at = NextUpdate.scheduled(pins: [], now: Self.now, policy: policy, random: FixedRandom.max)
        #expect(at == Self.now + 10)
    }

    // MARK: NextUpdate.isCatchUp

    @Test func anUpdateWithNothingPlannedCatchesUp() {
        #expect(NextUpdate.isCatchUp(planned: nil, now: Self.now, policy: Self.policy()))
    }

    @Test func anUpdateCatchesUpOnlyWhenLaterThanPlannedByMoreThanTheSplayWindow() {
        let policy = Self.policy(periodic: 7 * Self.day)  // window: 10 % = 60,480 s
        #expect(!NextUpdate.isCatchUp(planned: Self.now + 5, now: Self.now, policy: policy))
        #expect(!NextUpdate.isCatchUp(planned: Self.now, now: Self.now, policy: policy))
        #expect(!NextUpdate.isCatchUp(planned: Self.now - 60_480, now: Self.now, policy: policy))
        #expect(NextUpdate.isCatchUp(planned: Self.now - 60_481, now: Self.now, policy: policy))
        #expect(NextUpdate.isCatchUp(planned: .min, now: Self.now, policy: policy))
    }

    // MARK: Backoff.retryAt

    static func retry(
        failures: Int, random: FixedRandom = .zero, retryAfter: Int64? = nil,
        regularUpdate: Int64? = nil, policy: UpdatePolicy = policy()
    ) -> Int64 {
        Backoff.retryAt(
            now: now, failures: failures, policy: policy, retryAfter: retryAfter,
            regularUpdate: regularUpdate, random: random) - now
    }

    @Test func delayDoublesFromRetryMinUpToRetryMax() {
        let delays = (1...9).map { Self.retry(failures: $0) }
        #expect(delays == [30, 60, 120, 240, 480, 960, 1_920, 3_600, 3_600])
        #expect(Self.retry(failures: 1_000) == 3_600)
    }

    @Test func retryMaxThatIsNotAPowerOfTwoTimesRetryMinIsACap() {
        let policy = Self.policy(retryMin: 30, retryMax: 100)
        #expect((1...5).map { Self.retry(failures: $0, policy: policy) } == [30, 60, 100, 100, 100])
    }

    @Test func jitterTakesAtMostHalfTheStepButNeverGoesBelowRetryMin() {
        #expect(Self.retry(failures: 1, random: .max) == 30)
        #expect(Self.retry(failures: 3, random: .max) == 60)
        #expect(Self.retry(failures: 8, random: .max) == 1_800)
        #expect(Self.retry(failures: 8, random: FixedRandom(fraction: 0.5)) == 2_700)
    }

    @Test(arguments: 1...10)
    func jitterStaysWithinTheStep(_ failures: Int) {
        let upper = Self.retry(failures: failures, random: .zero)
        let lower = Self.retry(failures: failures, random: .max)
        #expect(lower >= max(30, upper / 2))
        #expect(lower <= upper)
        #expect(upper <= 3_600)
    }

    @Test func retryAfterIsHonouredUpToRetryMax() {
        #expect(Self.retry(failures: 1, retryAfter: 600) == 600)
        #expect(Self.retry(failures: 1, retryAfter: 86_400) == 3_600)
        #expect(Self.retry(failures: 3, retryAfter: 10) == 120)
    }

    @Test func retryIsNeverLaterThanAFutureRegularUpdate() {
        #expect(Self.retry(failures: 8, regularUpdate: Self.now + 100) == 100)
        #expect(Self.retry(failures: 1, retryAfter: 600, regularUpdate: Self.now + 100) == 100)
        #expect(Self.retry(failures: 1, regularUpdate: Self.now + 1_000) == 30)
    }

    @Test func aPastRegularUpdateIsIgnored() {
        #expect(Self.retry(failures: 1, regularUpdate: Self.now - 10) == 30)
        #expect(Self.retry(failures: 4, regularUpdate: Self.now - 10) == 240)
    }

    // MARK: DueTime.of

    static func cache(pins: [Pin], nextUpdate: Int64) -> CacheFile {
        CacheFile(
            list: PinList(pins: pins),
            metadata: .init(
                store: "banking", source: "https://example.com/list", updated: now - 60,
                nextUpdate: nextUpdate))
    }

    static let validPin = Pins.make("api.example.com", expires: now + 30 * day)

    static func state(_ result: UpdateResult?, retryAt: Int64? = nil) -> StoreState {
        var state = StoreState()
        state.lastResult = result
        state.retryAt = retryAt
        state.consecutiveFailures = result == nil || result == .ok ? 0 : 1
        return state
    }

    static func due(_ cache: CacheFile?, _ state: StoreState) -> Int64 {
        DueTime.of(cache: cache, state: state, policy: policy(), now: now)
    }

    @Test func withoutACacheTheStoreIsDueNow() {
        #expect(Self.due(nil, StoreState()) == Self.now)
        #expect(Self.due(nil, Self.state(.ok)) == Self.now)
    }

    @Test func withValidPinsTheStoreIsDueAtNextUpdate() {
        let cache = Self.cache(pins: [Self.validPin], nextUpdate: Self.now + 5_000)
        #expect(Self.due(cache, Self.state(.ok)) == Self.now + 5_000)
        #expect(Self.due(cache, StoreState()) == Self.now + 5_000)
    }

    @Test func withOnlyExpiredPinsTheStoreIsDueNow() {
        let cache = Self.cache(pins: [Pins.make("api.example.com", expires: Self.now - 1)], nextUpdate: Self.now + 5_000)
        #expect(Self.due(cache, Self.state(.ok)) == Self.now)
    }

    @Test func afterAFailureTheStoreIsDueAtRetryAt() {
        let cache = Self.cache(pins: [Self.validPin], nextUpdate: Self.now + 5_000)
        #expect(Self.due(cache, Self.state(.networkError, retryAt: Self.now + 120)) == Self.now + 120)
        #expect(Self.due(nil, Self.state(.invalidSignature, retryAt: Self.now + 120)) == Self.now + 120)
    }

    @Test func aDueTimeBeyondAnyScheduleMeansTheClockWentBackAndIsDueNow() {
        let cache = Self.cache(pins: [Self.validPin], nextUpdate: Self.now + 30 * Self.day)
        #expect(Self.due(cache, Self.state(.ok)) == Self.now)
        #expect(Self.due(nil, Self.state(.httpError, retryAt: Self.now + 30 * Self.day)) == Self.now)
    }

    // MARK: StoreHealth and STATUS=

    static let periodic: Int64 = 7 * day

    static func health(pins: Int, _ result: UpdateResult?, lastSuccess: Int64?) -> StoreHealth {
        StoreHealth.of(
            validPins: pins, lastResult: result, lastSuccess: lastSuccess, now: now,
            periodicUpdateInterval: periodic)
    }

    @Test func healthHasFourStates() {
        #expect(Self.health(pins: 3, .ok, lastSuccess: Self.now - 60) == .fresh)
        #expect(Self.health(pins: 3, .ok, lastSuccess: Self.now - 2 * Self.periodic) == .fresh)
        #expect(Self.health(pins: 3, .ok, lastSuccess: Self.now - 2 * Self.periodic - 1) == .stale)
        #expect(Self.health(pins: 3, .invalidSignature, lastSuccess: Self.now - 60) == .failing)
        #expect(Self.health(pins: 0, .ok, lastSuccess: Self.now - 60) == .empty)
    }

    @Test func worseConditionsWin() {
        #expect(Self.health(pins: 0, .networkError, lastSuccess: nil) == .empty)
        #expect(Self.health(pins: 2, .networkError, lastSuccess: Self.now - 3 * Self.periodic) == .failing)
        #expect([StoreHealth.empty, .fresh, .failing, .stale].sorted() == [.fresh, .stale, .failing, .empty])
    }

    @Test func statusLineSummarisesStoresAndNamesTheWorst() {
        let line = StatusLine.make(
            [
                .init(store: "alpha", health: .fresh, reason: nil),
                .init(store: "banking", health: .failing, reason: "invalid-signature"),
                .init(store: "zeta", health: .fresh, reason: nil),
            ], nextUpdateIn: 5 * 3_600)
        #expect(line == "3 stores: 2 fresh, 1 failing (banking: invalid-signature); next update in 5h")
    }

    @Test func statusLineVariants() {
        #expect(StatusLine.make([], nextUpdateIn: 60) == "no stores configured")
        #expect(StatusLine.make([.init(store: "a", health: .fresh, reason: nil)], nextUpdateIn: nil) == "1 store: 1 fresh")
        #expect(
            StatusLine.make(
                [
                    .init(store: "a", health: .stale, reason: nil),
                    .init(store: "b", health: .empty, reason: nil),
                ], nextUpdateIn: 90) == "2 stores: 1 stale, 1 empty (b: empty); next update in 1m 30s")
    }
}

@Suite("Catch-up splay")
struct CatchUpSplayTests {
    struct Fixed: RandomSource {
        var fraction: Double
        func uniform(upTo upper: Int64) -> Int64 { Int64(Double(upper) * fraction) }
    }

    private let policy = UpdatePolicy()
    private let pins = [Pin(name: "a", fingerprint: [UInt8](repeating: 1, count: 32), expires: 4_102_444_800)]

    @Test("after a catch-up the next update may land anywhere in one splayed period, never later, never before retry_min")
    func catchUpSpreadsOverTheInterval() {
        let week = policy.periodicUpdateInterval
        func next(_ fraction: Double, catchingUp: Bool = true) -> Int64 {
            NextUpdate.scheduled(pins: pins, now: 0, policy: policy, random: Fixed(fraction: fraction), catchingUp: catchingUp)
        }
        #expect(next(0) == week)
        #expect(next(0.5) == (week - week / 20) / 2 + (week - week / 20) % 2)
        #expect(next(1) == policy.retryMin)
        #expect(next(1, catchingUp: false) == week - week / 10)
    }

    @Test("what counts as catching up")
    func catchUpCases() throws {
        let store = StoreConfig(id: "s", url: "https://example.com", publicKeys: [])
        func cache(nextUpdate: Int64, expires: Int64 = 4_102_444_800) -> CacheFile {
            CacheFile(
                list: PinList(pins: [Pin(name: "a", fingerprint: [UInt8](repeating: 1, count: 32), expires: expires)]),
                metadata: .init(store: "s", source: "https://example.com", updated: 0, nextUpdate: nextUpdate))
        }
        let now: Int64 = 1_000_000
        #expect(StoreUpdater.isCatchUp(nil, store: store, now: now))
        #expect(StoreUpdater.isCatchUp(cache(nextUpdate: now, expires: 10), store: store, now: now), "only expired pins")
        #expect(!StoreUpdater.isCatchUp(cache(nextUpdate: now - 60), store: store, now: now), "on time")
        #expect(StoreUpdater.isCatchUp(cache(nextUpdate: now - store.policy.periodicUpdateInterval / 10 - 1), store: store, now: now))
    }
}
