import PinKeeper
import TestSupport
import Testing
@testable import PinKeeperDaemon

/// `authoritative = true` in the merge: a verified challenge response is the server's whole list.
@Suite("PinMerger, authoritative")
struct AuthoritativeMergeTests {
    static let now = MergeTests.now
    static let keyB = MergeTests.keyB
    static let listed = Pins.make("api.example.com", 0x01, expires: now + 1_000, key: keyB)
    static let unlisted = Pins.make("api.example.com", 0x02, expires: now + 2_000, key: keyB)
    static let new = Pins.make("cdn.example.com", 0x03, expires: now + 3_000)

    static func merge(
        _ mode: ListMode = .challenge, authoritative: Bool, cached: [Pin], received: [Pin]
    ) throws -> PinMerger.Outcome {
        let merger = PinMerger(mode: mode, verifier: try Vectors.verifierB(), authoritative: authoritative)
        return try merger.merge(cached: cached, received: PinList(pins: received), responseKey: try Vectors.keyB(), now: now)
    }

    @Test("a cached pin the response no longer lists goes; one it lists again stays; new ones come")
    func dropsWhatIsNotListed() throws {
        let outcome = try Self.merge(authoritative: true, cached: [Self.listed, Self.unlisted], received: [Self.listed, Self.new])
        #expect(outcome.pins.map(\.fingerprint) == [Self.listed.fingerprint, Self.new.fingerprint])
        #expect(outcome.unlisted == 1)
        #expect(outcome.added == 1)
    }

    @Test("false (the default): Wultra's merge keeps every unexpired cached pin")
    func mergeKeepsWhatIsNotListed() throws {
        let outcome = try Self.merge(authoritative: false, cached: [Self.listed, Self.unlisted], received: [Self.listed, Self.new])
        #expect(Set(outcome.pins.map(\.fingerprint)) == Set([Self.listed, Self.unlisted, Self.new].map(\.fingerprint)))
        #expect(outcome.unlisted == 0)
    }

    @Test("the same name and fingerprint with another expiry is another pin: the listed one replaces it")
    func anotherExpiryReplaces() throws {
        var renewed = Self.listed
        renewed.expires += 500
        let outcome = try Self.merge(authoritative: true, cached: [Self.listed], received: [renewed])
        #expect(outcome.pins.map(\.expires) == [renewed.expires])
        #expect(outcome.unlisted == 1)
    }

    @Test("a list of nothing valid (empty, or only expired entries) empties the store instead of failing")
    func nothingValidEmpties() throws {
        let expired = Pins.make("api.example.com", 0x04, expires: Self.now - 1)
        for received in [[], [expired]] {
            let outcome = try Self.merge(authoritative: true, cached: [Self.listed, Self.unlisted], received: received)
            #expect(outcome.pins.isEmpty)
            #expect(outcome.unlisted == 2)
        }
        // The merge as Wultra does it refuses to empty the store.
        #expect(throws: UpdateFailure.self) { try Self.merge(authoritative: false, cached: [], received: [expired]) }
    }

    @Test("expired cached pins are not counted as dropped")
    func expiredAreNotCounted() throws {
        let old = Pins.make("old.example.com", 0x05, expires: Self.now - 1, key: Self.keyB)
        let outcome = try Self.merge(authoritative: true, cached: [Self.listed, old], received: [Self.listed])
        #expect(outcome.unlisted == 0)
    }

    @Test("static mode is never authoritative: a static list may be an older one replayed")
    func staticIsNever() throws {
        let merger = PinMerger(mode: .static, verifier: try Vectors.verifierB(), authoritative: true)
        #expect(!merger.authoritative)
        let outcome = try merger.merge(cached: [MergeTests.cachedValid], received: PinList(pins: []), now: Self.now)
        #expect(outcome.pins == [MergeTests.cachedValid])
    }
}
