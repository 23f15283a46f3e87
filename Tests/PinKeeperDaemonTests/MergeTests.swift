import Foundation
import PinKeeper
import TestSupport
import Testing
@testable import PinKeeperDaemon

@Suite("PinMerger (docs/protocol.md §4)")
struct MergeTests {
    /// Fixed time between the two vector entries' expiries (2018 and 2100).
    static let now: Int64 = 1_700_000_000
    /// A well-formed DER signature that verifies under no known key (vector android-github-2024-dup-b).
    static let wrongSignature = "MEQCIElYrNRc/RnIJTFM9Or90Op+5YfEc+OA0JCOzEdewx07AiAm/xAKMkhu9k9mXNFNyUSB/A1FbnqKEegpEpsugY5Z/Q=="

    static func merger(_ mode: ListMode = .static, expected: [String]? = nil) throws -> PinMerger {
        PinMerger(mode: mode, verifier: try Vectors.verifierB(), expectedCommonNames: expected)
    }

    static func merge(
        _ mode: ListMode = .static, cached: [Pin] = [], received: [Pin],
        domainsConfig: DomainsConfig? = nil, expected: [String]? = nil,
        responseKey: PublicKey? = nil
    ) throws -> PinMerger.Outcome {
        try merger(mode, expected: expected).merge(
            cached: cached, received: PinList(pins: received, domainsConfig: domainsConfig),
            responseKey: responseKey, now: now)
    }

    static func failure(_ mode: ListMode = .static, cached: [Pin] = [], received: [Pin]) throws -> UpdateFailure? {
        let merger = try merger(mode)
        do {
            _ = try merger.merge(cached: cached, received: PinList(pins: received), now: now)
            return nil
        } catch {
            return error
        }
    }

    /// The id of key B, the one `merger` verifies with (PublicKey.id).
    static let keyB = (try? Vectors.keyB().id) ?? "key B is missing"
    static let cachedValid = Pins.make("cached.example.com", 0x0C, expires: now + 1_000, signature: "kept", key: keyB)
    static let cachedExpired = Pins.make("old.example.com", 0x0D, expires: now - 1, key: keyB)

    /// A pin as the merger publishes it after key B verified it.
    static func tagged(_ pin: Pin, key: String = keyB) -> Pin {
        var tagged = pin
        tagged.key = key
        return tagged
    }

    // MARK: Static mode

    @Test func validNewEntryIsAddedAndExpiredEntrySkipped() throws {
        let (expired, valid) = try Vectors.staticList()
        let outcome = try Self.merge(received: [expired, valid])
        #expect(outcome.pins == [Self.tagged(valid)])
        #expect(outcome.added == 1)
        #expect(outcome.expiredReceived == 1)
        #expect(outcome.pins.first?.signature == valid.signature)
    }

    @Test func unexpiredCachedPinsAreKeptAndExpiredOnesDropped() throws {
        let (_, valid) = try Vectors.staticList()
        let outcome = try Self.merge(cached: [Self.cachedExpired, Self.cachedValid], received: [valid])
        #expect(outcome.pins == [Self.tagged(valid), Self.cachedValid])
        #expect(outcome.added == 1)
    }

    @Test func pinExpiringExactlyNowIsStillValid() throws {
        let boundary = Pins.make("edge.example.com", expires: Self.now, key: Self.keyB)
        let (_, valid) = try Vectors.staticList()
        #expect(try Self.merge(cached: [boundary], received: [valid]).pins.contains(boundary))
    }

    @Test func knownPinIsNotVerifiedAgain() throws {
        let (_, valid) = try Vectors.staticList()
        var resent = valid
        resent.signature = Self.wrongSignature
        let outcome = try Self.merge(cached: [Self.tagged(valid)], received: [resent])
        #expect(outcome.pins == [Self.tagged(valid)])
        #expect(outcome.added == 0)
    }

    @Test func duplicatesWithinOneResponseCollapse() throws {
        let (_, valid) = try Vectors.staticList()
        var duplicate = valid
        duplicate.signature = Self.wrongSignature
        let outcome = try Self.merge(received: [valid, duplicate, valid])
        #expect(outcome.pins == [Self.tagged(valid)])
        #expect(outcome.added == 1)
    }

    @Test func newEntryWithABadSignatureRejectsTheWholeResponse() throws {
        let (_, valid) = try Vectors.staticList()
        let forged = Pins.make("evil.example.com", 0x66, expires: Self.now + 1_000, signature: Self.wrongSignature)
        let error = try Self.failure(cached: [Self.cachedValid], received: [valid, forged])
        #expect(error?.result == .invalidSignature)
        #expect(error?.reason.contains("evil.example.com") == true)
    }

    @Test func signatureMustCoverTheEntryAsReceived() throws {
        let (_, valid) = try Vectors.staticList()
        var extended = valid
        extended.expires += 86_400
        #expect(try Self.failure(received: [extended])?.result == .invalidSignature)
    }

    @Test(arguments: [nil, ""] as [String?])
    func missingSignatureIsInvalidData(_ signature: String?) throws {
        let (_, valid) = try Vectors.staticList()
        var unsigned = Pins.make("new.example.com", 0x05, expires: Self.now + 1_000)
        unsigned.signature = signature
        let error = try Self.failure(received: [valid, unsigned])
        #expect(error?.result == .invalidData)
        #expect(error?.reason.contains("new.example.com") == true)
    }

    @Test func upstreamDuplicateFixtureIsRejectedInStaticMode() throws {
        let received = try Vectors.list("upstream/ssl-pinning-android/duplicate-entries.json").pins
        #expect(try Self.failure(received: received)?.result == .invalidSignature)
    }

    // MARK: Static mode: unsigned fields (docs/protocol.md §6, static mode)

    static let pinningOff = DomainsConfig(sslPinningRequiredForUnlisted: false, domains: [])

    @Test func aStaticListsDepthAndDomainsConfigAreDroppedAndReported() throws {
        let (_, valid) = try Vectors.staticList()
        var deep = valid
        deep.depth = 2  // not covered by the entry's signature
        let outcome = try Self.merge(received: [deep], domainsConfig: Self.pinningOff)
        #expect(outcome.pins == [Self.tagged(valid)])
        #expect(outcome.pins.map(\.depth) == [0])
        #expect(outcome.domainsConfig == nil)
        #expect(outcome.ignoredUnsignedFields)
    }

    @Test func aStaticListWithOnlySignedFieldsIsNotReported() throws {
        let (_, valid) = try Vectors.staticList()
        #expect(try !Self.merge(received: [valid]).ignoredUnsignedFields)
    }

    @Test func aDepthVariantOfAKnownStaticPinIsTheSamePin() throws {
        let (_, valid) = try Vectors.staticList()
        var deep = valid
        deep.depth = 1
        deep.signature = Self.wrongSignature
        let outcome = try Self.merge(cached: [Self.tagged(valid)], received: [deep])
        #expect(outcome.pins == [Self.tagged(valid)])
        #expect(outcome.added == 0)
    }

    // MARK: Keys (docs/cache-format.md, "Removing a key removes its pins")

    @Test func staticPinsRecordTheKeyThatVerifiedThem() throws {
        let (_, valid) = try Vectors.staticList()
        let merger = PinMerger(mode: .static, verifier: SignatureVerifier(keys: [try Vectors.keyA(), try Vectors.keyB()]))
        let outcome = try merger.merge(cached: [], received: PinList(pins: [valid]), now: Self.now)
        #expect(outcome.pins.map(\.key) == [try Vectors.keyB().id])
        #expect(try Vectors.keyA().id != Vectors.keyB().id)
    }

    @Test func challengePinsAndDomainsConfigRecordTheResponseKey() throws {
        let list = try Vectors.list("generated-challenge-v2-depth/response-body.json")
        let outcome = try Self.merger(.challenge).merge(cached: [], received: list, responseKey: try Vectors.keyB(), now: Self.now)
        #expect(outcome.pins.map(\.key) == [Self.keyB, Self.keyB])
        #expect(outcome.domainsConfig?.key == Self.keyB)
    }

    @Test(arguments: [ListMode.static, .challenge])
    func cachedPinsNoConfiguredKeyVouchesForAreNotCarriedOver(_ mode: ListMode) throws {
        let (_, valid) = try Vectors.staticList()
        let removed = Pins.make("gone.example.com", 0x0A, expires: Self.now + 1_000, signature: "x", key: "0123456789abcdef")
        let legacy = Pins.make("legacy.example.com", 0x0B, expires: Self.now + 1_000, signature: "x")
        let outcome = try Self.merge(
            mode, cached: [removed, legacy, Self.cachedValid], received: [valid],
            responseKey: try Vectors.keyB())
        #expect(outcome.pins.map(\.name) == ["api.example.com", "cached.example.com"])
        #expect(outcome.pins.allSatisfy { $0.key == Self.keyB })
    }

    @Test func aChallengePinWithoutKeyIsAdoptedWhenTheResponseListsItAgain() throws {
        let legacy = Pins.make("api.example.com", 0x01, expires: Self.now + 1_000)
        let outcome = try Self.merge(.challenge, cached: [legacy], received: [legacy], responseKey: try Vectors.keyB())
        #expect(outcome.pins == [Self.tagged(legacy)])
    }

    // MARK: Challenge mode

    @Test func challengeModeDropsPerEntrySignaturesAndDoesNotCheckThem() throws {
        let forged = Pins.make("api.example.com", 0x01, expires: Self.now + 1_000, signature: Self.wrongSignature)
        let outcome = try Self.merge(.challenge, cached: [Self.cachedValid], received: [forged])
        #expect(outcome.pins.map(\.signature) == [nil, "kept"])
        #expect(outcome.added == 1)
    }

    @Test func challengeModeCollapsesTheUpstreamDuplicateFixture() throws {
        let received = try Vectors.list("upstream/ssl-pinning-android/duplicate-entries.json").pins
        let outcome = try Self.merger(.challenge).merge(cached: [], received: PinList(pins: received), now: Self.now)
        #expect(outcome.pins.count == 1)
        #expect(outcome.pins.first?.name == "github.com")
        #expect(outcome.pins.first?.signature == nil)
    }

    @Test func challengeV2BodyKeepsDepthAndDomainsConfig() throws {
        let list = try Vectors.list("generated-challenge-v2-depth/response-body.json")
        let outcome = try Self.merger(.challenge).merge(cached: [], received: list, now: Self.now)
        #expect(outcome.pins.map(\.depth) == [0, 1])
        #expect(outcome.domainsConfig == list.domainsConfig)
        #expect(outcome.domainsConfig != nil)
        #expect(!outcome.ignoredUnsignedFields)
    }

    @Test func domainsConfigIsReplacedByWhatTheResponseSays() throws {
        let outcome = try Self.merge(.challenge, cached: [Self.cachedValid], received: [], domainsConfig: nil)
        #expect(outcome.domainsConfig == nil)
    }

    // MARK: expected_common_names, empty results

    @Test func namesOutsideExpectedCommonNamesAreKeptButReported() throws {
        let received = [
            Pins.make("b.example.com", 0x01, expires: Self.now + 10), Pins.make("z.example.com", 0x02, expires: Self.now + 10),
            Pins.make("a.example.com", 0x03, expires: Self.now + 10),
        ]
        let outcome = try Self.merge(.challenge, received: received, expected: ["a.example.com"])
        #expect(outcome.unexpectedNames == ["b.example.com", "z.example.com"])
        #expect(outcome.pins.count == 3)
        #expect(try Self.merge(.challenge, received: received, expected: nil).unexpectedNames.isEmpty)
    }

    @Test func emptyResultIsStoreEmpty() throws {
        #expect(try Self.failure(received: [])?.result == .storeEmpty)
        #expect(try Self.failure(cached: [Self.cachedExpired], received: [])?.result == .storeEmpty)
        let (expired, _) = try Vectors.staticList()
        #expect(try Self.failure(received: [expired])?.result == .storeEmpty)
    }

    @Test func allExpiredListWithValidCacheIsOkAndCountsTheExpiredEntries() throws {
        let (expired, _) = try Vectors.staticList()
        let older = Pins.make("www.google.com", 0x07, expires: Self.now - 10, signature: Self.wrongSignature)
        let outcome = try Self.merge(cached: [Self.cachedValid], received: [expired, older])
        #expect(outcome.pins == [Self.cachedValid])
        #expect(outcome.added == 0)
        #expect(outcome.expiredReceived == 2)
    }

    // MARK: Order

    @Test func outputIsSortedByNameThenLatestExpiryFirst() throws {
        let cached = [
            Pins.make("b", 0x01, expires: Self.now + 10, key: Self.keyB),
            Pins.make("a", 0x02, expires: Self.now + 10, key: Self.keyB),
        ]
        let received = [
            Pins.make("b", 0x03, expires: Self.now + 30), Pins.make("a", 0x04, expires: Self.now + 20),
            Pins.make("c", 0x05, expires: Self.now + 5), Pins.make("a", 0x06, expires: Self.now + 40),
        ]
        let outcome = try Self.merge(.challenge, cached: cached, received: received)
        #expect(outcome.pins.map(\.name) == ["a", "a", "a", "b", "b", "c"])
        #expect(outcome.pins.map(\.expires) == [40, 20, 10, 30, 10, 5].map { Self.now + $0 })
    }
}
