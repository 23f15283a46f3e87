import Foundation
import Logging
import PinKeeper
import TestSupport
import Testing
@testable import PinKeeperDaemon

/// Every fast path a static list takes for scale is held to the simple one. The fast path is
/// `StoreUpdater.fetchAndPublish` as an update runs it: entries kept compact (`StaticEntries`),
/// verified while the list is read (`EarlyVerification`), merged by `PinMerger.mergeStatic`,
/// the file written beside the published one while the rest is verified (`earlyPublication`),
/// then put in place (`CacheDirectory.commit`). The simple path decodes the list (`PinList`),
/// merges it with the rules written out plainly (`PinMerger.mergeDecoded`) and encodes a
/// `CacheFile`. On generated lists signed with real P-256 keys both must give the same pins,
/// counts, digest and schedule, the same refusal word for word, and the same published bytes,
/// and leave no temp file behind.
@Suite("Fast paths against the simple path (static lists)")
struct FastPathPropertyTests {
    /// What an update of one list came to, as far as anyone can see it.
    enum Answer: Equatable {
        case published(Published)
        case refused(UpdateFailure)
    }

    struct Published: Equatable {
        var pins: [Pin]
        var added: Int
        var expiredReceived: Int
        var unexpectedNames: [String]
        var ignoredUnsignedFields: Bool
        var listDigest: String?
        var nextUpdate: Int64
        /// The file as published; nil when the published file is left as it was.
        var bytes: [UInt8]?
    }

    /// How many cases took each way, so that a generator that stopped reaching one is noticed.
    struct Tally {
        var cases = 0
        var writtenWhileVerifying = 0
        var publishedAfterwards = 0
        var refused = 0
    }

    /// Both paths schedule with the same fraction of their random window.
    static let random = FixedRandom(fraction: 0.37)

    struct Canned: HTTPFetching {
        var body: Data
        func fetch(_ request: HTTPRequest) async throws(UpdateFailure) -> HTTPResponse {
            HTTPResponse(status: 200, headers: [:], body: body)
        }
    }

    @Test("random small lists: the same pins, counts, refusals and published bytes")
    func randomLists() async throws {
        let tally = try await holds((1...240).map { StaticListCase.random(seed: 0xFA57_0000 + $0) })
        #expect(tally.writtenWhileVerifying >= 60, "\(tally)")
        #expect(tally.publishedAfterwards >= 20, "\(tally)")
        #expect(tally.refused >= 40, "\(tally)")
    }

    @Test("a bad signature at every position of a list")
    func badAtEveryPosition() async throws {
        let cases = (1...4).flatMap { StaticListCase.badAtEveryPosition(seed: 0xBAD0_0000 + $0) }
        let tally = try await holds(cases)
        #expect(tally.refused >= cases.count / 2, "\(tally)")
    }

    /// Positions in the first full chunk, which the early verification reaches while the list
    /// is read, in the second, and in the partial last chunk, which only the merge verifies.
    @Test("lists of more than one chunk, verified while they are read")
    func largeLists() async throws {
        let bad: [Int?] = [nil, nil, nil, 0, 3, 60, 700, 1_030, 1_090, 5_000]
        let tally = try await holds(bad.enumerated().map { StaticListCase.large(seed: 0x1A26_0000 + UInt64($0), bad: $1) })
        #expect(tally.refused >= 5, "\(tally)")
        #expect(tally.writtenWhileVerifying + tally.publishedAfterwards >= 3, "\(tally)")
    }

    /// The file written while verifying a list that is then refused (or signed by another key)
    /// must be gone when the update returns, before the store's lock goes: its task may still
    /// be held (here by the test, in an update by the runtime for a moment), so `settle` must
    /// remove the file itself rather than leave it to the last reference.
    @Test("a file written while verifying but not published is gone once settled, whoever holds its task")
    func unpublishedFileIsRemoved() async throws {
        let root = TestEnvironment.temporaryDirectory("fast-path-settle")
        defer { try? FileManager.default.removeItem(at: root) }
        let cache = CacheDirectory(path: root.path)
        let now = StaticListCase.now
        let metadata = CacheFile.Metadata(store: "fast", source: "https://127.0.0.1/fast", updated: now, nextUpdate: now + 9, mode: .static)
        let writes = EarlyWrites()
        let task = Task.detached { try? cache.prepare(pins: [Pin](), domainsConfig: nil, metadata: metadata) }
        writes.started(task)
        #expect(await task.value != nil)
        #expect(try FileManager.default.contentsOfDirectory(atPath: root.path).count == 1, "nothing was prepared")
        await writes.settle()
        let left = try withExtendedLifetime(task) { try FileManager.default.contentsOfDirectory(atPath: root.path) }
        #expect(left.isEmpty, "left \(left)")
    }

    /// Runs every case both ways in a cache directory of its own.
    func holds(_ cases: [StaticListCase]) async throws -> Tally {
        let root = TestEnvironment.temporaryDirectory("fast-path")
        defer { try? FileManager.default.removeItem(at: root) }
        let cache = CacheDirectory(path: root.path)
        var tally = Tally()
        for item in cases {
            let body = try item.body()
            let (fast, written) = try await Self.fast(item, body: body, cache: cache)
            let simple = Self.simple(item, body: body)
            #expect(fast == simple, "\(item)\n  fast:   \(Self.describe(fast))\n  simple: \(Self.describe(simple))")
            let leftovers = try FileManager.default.contentsOfDirectory(atPath: root.path)
            #expect(leftovers.isEmpty, "\(item): left \(leftovers) after \(Self.describe(fast))")
            tally.cases += 1
            switch fast {
            case .refused: tally.refused += 1
            case .published: if written { tally.writtenWhileVerifying += 1 } else { tally.publishedAfterwards += 1 }
            }
        }
        return tally
    }

    /// `fetchAndPublish` as `update` runs it (`plan` writing the file while verifying, then
    /// `commit`, or `publish` when it prepared none), against a server that answers `body`; the
    /// published file read back from disk.
    static func fast(_ item: StaticListCase, body: Data, cache: CacheDirectory) async throws -> (Answer, written: Bool) {
        let updater = StoreUpdater(
            fetcher: Canned(body: body), cache: cache, state: StateDirectory(path: cache.path), random: random,
            logger: Logger(label: "fast-path") { _ in SwiftLogNoOpLogHandler() })
        let store = item.store
        let plan: StoreUpdater.Plan
        do {
            plan = try await updater.fetchAndPublish(
                store, from: .server, published: item.published, record: StoreState(), now: StaticListCase.now)
        } catch {
            return (.refused(error), false)
        }
        var bytes: [UInt8]?
        if plan.file != nil {
            bytes = Array(try Data(contentsOf: URL(fileURLWithPath: cache.filePath(for: store.id))))
            try FileManager.default.removeItem(atPath: cache.filePath(for: store.id))
        }
        let outcome = try #require(plan.outcome)
        let published = Published(
            pins: plan.pins, added: outcome.added, expiredReceived: outcome.expiredReceived, unexpectedNames: outcome.unexpectedNames,
            ignoredUnsignedFields: plan.ignoredUnsignedFields, listDigest: plan.listDigest, nextUpdate: plan.nextUpdate, bytes: bytes)
        #expect(outcome.pins == plan.pins && outcome.ignoredUnsignedFields == plan.ignoredUnsignedFields)
        return (.published(published), plan.prepared != nil)
    }

    /// The list decoded whole, merged by the plain rules, its digest over the entries the
    /// signatures cover, and its file encoded as `CacheFile` encodes it.
    static func simple(_ item: StaticListCase, body: Data) -> Answer {
        let store = item.store, published = item.published, now = StaticListCase.now
        let list: PinList
        do {
            list = try PinList(json: body)
        } catch {
            return .refused(UpdateFailure(.invalidData, "the list is malformed: \(error.reason)"))
        }
        let verifier = SignatureVerifier(keys: store.publicKeys)
        let outcome: PinMerger.Outcome
        do {
            outcome = try PinMerger(mode: .static, verifier: verifier, expectedCommonNames: store.expectedCommonNames)
                .mergeDecoded(cached: published?.list.pins ?? [], received: list, now: now)
        } catch {
            return .refused(error)
        }
        // Counted: unexpired entries (all verified, or the list was refused) and expired ones whose signature verifies.
        let signed = list.pins.filter { !$0.isExpired(at: now) || verifier.verifyEntry($0) }.map { pin in
            var pin = pin
            pin.depth = 0
            return pin
        }
        let next = NextUpdate.scheduled(
            pins: outcome.pins, now: now, policy: store.policy, random: random,
            catchingUp: StoreUpdater.isCatchUp(published, store: store, now: now))
        // Only expired entries and nothing dropped: the published file stays as it is.
        let unchanged =
            !list.pins.isEmpty && outcome.expiredReceived == list.pins.count
            && outcome.pins == published?.list.pins.filter { !$0.isExpired(at: now) }
        let file = CacheFile(
            list: PinList(pins: outcome.pins, domainsConfig: nil),
            metadata: .init(store: store.id, source: store.url, updated: now, nextUpdate: next, mode: .static))
        return .published(
            Published(
                pins: outcome.pins, added: outcome.added, expiredReceived: outcome.expiredReceived,
                unexpectedNames: outcome.unexpectedNames, ignoredUnsignedFields: outcome.ignoredUnsignedFields,
                listDigest: ListDigest.of(pins: signed, domainsConfig: nil), nextUpdate: next,
                bytes: unchanged ? nil : file.encodedBytes()))
    }

    static func describe(_ answer: Answer) -> String {
        switch answer {
        case .refused(let failure): return "refused \(failure)"
        case .published(let published):
            return "\(published.pins.count) pins, added \(published.added), expired \(published.expiredReceived), "
                + "unexpected \(published.unexpectedNames), unsigned fields \(published.ignoredUnsignedFields), "
                + "digest \(published.listDigest ?? "none"), next \(published.nextUpdate), "
                + (published.bytes.map { "\($0.count) bytes, SHA-256 \(lowerHex(SHA256.digest($0)))" } ?? "no file")
        }
    }
}
