import Foundation
import PinKeeper
import TestSupport
import Testing
@testable import PinKeeperDaemon

/// `CachedPins`: what a published file may keep under the store's current keys and mode
/// (docs/cache-format.md, "Removing a key removes its pins", "Nothing unsigned decides trust").
@Suite("Cached pins against the configured keys")
struct CachedPinsTests {
    static let removedKey = "0123456789abcdef"

    static func store(_ mode: ListMode, keys: [PublicKey]) -> StoreConfig {
        StoreConfig(id: "banking", url: "https://pins.example.com/list", publicKeys: keys, mode: mode)
    }

    static func file(_ pins: [Pin], domainsConfig: DomainsConfig? = nil, mode: ListMode?) -> CacheFile {
        CacheFile(
            list: PinList(pins: pins, domainsConfig: domainsConfig),
            metadata: .init(store: "banking", source: "https://pins.example.com/list", updated: 1, nextUpdate: 2, mode: mode))
    }

    /// The vector entry valid until 2100, signed by key B, recorded as verified by `key`.
    static func signedPin(key: String?) throws -> Pin {
        var pin = try Vectors.staticList().valid
        pin.key = key
        return pin
    }

    // MARK: Static mode

    @Test("static: a pin of a removed key that verifies under a remaining key is re-tagged, not dropped")
    func staticRetag() throws {
        let keyB = try Vectors.keyB()
        let result = CachedPins.reconcile(
            Self.file([try Self.signedPin(key: Self.removedKey)], mode: .static),
            store: Self.store(.static, keys: [keyB]))
        #expect(result.file.list.pins == [try Self.signedPin(key: keyB.id)])
        #expect(result.dropped == 0)
        #expect(result.changed && !result.fetchNow)
    }

    @Test("static: a pin no remaining key verifies is dropped and counted")
    func staticDrop() throws {
        let keyB = try Vectors.keyB()
        let other = Pins.make("other.example.com", 0x02, expires: 4_102_444_800, signature: MergeTests.wrongSignature, key: keyB.id)
        let result = CachedPins.reconcile(
            Self.file([try Self.signedPin(key: keyB.id), other], mode: .static),
            store: Self.store(.static, keys: [try Vectors.keyA()]))
        #expect(result.file.list.pins.isEmpty)
        #expect(result.dropped == 2)
        #expect(result.changed && !result.fetchNow)
    }

    @Test("static: pins written before keys were recorded are verified again and tagged")
    func staticLegacy() throws {
        let keyA = try Vectors.keyA(), keyB = try Vectors.keyB()
        let result = CachedPins.reconcile(
            Self.file([try Self.signedPin(key: nil)], mode: nil),
            store: Self.store(.static, keys: [keyA, keyB]))
        #expect(result.file.list.pins == [try Self.signedPin(key: keyB.id)])
        #expect(result.file.metadata.mode == .static)
        #expect(result.dropped == 0 && result.changed)
    }

    @Test("static: an older file's domainsConfig and depth are removed, duplicates collapse")
    func staticSanitised() throws {
        let keyB = try Vectors.keyB()
        var deep = try Self.signedPin(key: keyB.id)
        deep.depth = 1
        let loaded = Self.file(
            [try Self.signedPin(key: keyB.id), deep],
            domainsConfig: DomainsConfig(sslPinningRequiredForUnlisted: false, domains: []), mode: nil)
        let result = CachedPins.reconcile(loaded, store: Self.store(.static, keys: [keyB]))
        #expect(result.file.list.domainsConfig == nil)
        #expect(result.file.list.pins == [try Self.signedPin(key: keyB.id)])
        #expect(result.ignoredUnsignedFields && result.changed)
    }

    @Test("static: a file out of published order, or with a pin twice, comes out sorted and without the duplicate")
    func staticReordered() throws {
        let keyB = try Vectors.keyB()
        let pins = ["c.example.com", "a.example.com", "b.example.com"].enumerated().map { index, name in
            Pins.make(name, UInt8(index + 1), expires: 4_102_444_800, signature: MergeTests.wrongSignature, key: keyB.id)
        }
        let sorted = pins.sorted(by: Pin.publishedOrder)
        for loaded in [pins, sorted + [sorted[1]], [sorted[0]] + sorted] {
            let result = CachedPins.reconcile(Self.file(loaded, mode: .static), store: Self.store(.static, keys: [keyB]))
            #expect(result.file.list.pins == sorted)
            #expect(result.changed && result.dropped == 0)
        }
        let unchanged = CachedPins.reconcile(Self.file(sorted, mode: .static), store: Self.store(.static, keys: [keyB]))
        #expect(unchanged.file.list.pins == sorted && !unchanged.changed)
    }

    // MARK: Challenge mode

    @Test("challenge: a removed key's pins and domainsConfig are dropped and the store is fetched at once")
    func challengeDrop() throws {
        let keyB = try Vectors.keyB()
        let kept = Pins.make("api.example.com", 0x01, expires: 4_102_444_800, key: keyB.id)
        let gone = Pins.make("api.example.com", 0x02, expires: 4_102_444_800, key: Self.removedKey)
        let loaded = Self.file(
            [kept, gone],
            domainsConfig: DomainsConfig(
                sslPinningRequiredForUnlisted: false, domains: [],
                key: Self.removedKey), mode: .challenge)
        let result = CachedPins.reconcile(loaded, store: Self.store(.challenge, keys: [keyB]))
        #expect(result.file.list.pins == [kept])
        #expect(result.file.list.domainsConfig == nil)
        #expect(result.dropped == 1 && result.droppedDomainsConfig)
        #expect(result.changed && result.fetchNow)
    }

    @Test("challenge: pins without a key (older pinkeeper) are kept, and the store is fetched at once to confirm them")
    func challengeLegacy() throws {
        let legacy = Pins.make("api.example.com", 0x01, expires: 4_102_444_800)
        let domains = DomainsConfig(sslPinningRequiredForUnlisted: true, domains: [])
        let result = CachedPins.reconcile(
            Self.file([legacy], domainsConfig: domains, mode: nil),
            store: Self.store(.challenge, keys: [try Vectors.keyB()]))
        #expect(result.file.list.pins == [legacy])
        #expect(result.file.list.domainsConfig == domains)
        #expect(result.unconfirmed == 1 && result.dropped == 0)
        #expect(result.fetchNow)
        #expect(result.changed)  // the mode is recorded
    }

    @Test("challenge: a domainsConfig without a key, next to keyed pins, is unconfirmed: the store is fetched at once")
    func challengeKeylessDomainsConfig() throws {
        let keyB = try Vectors.keyB()
        let pin = Pins.make("api.example.com", 0x01, expires: 4_102_444_800, key: keyB.id)
        let domains = DomainsConfig(sslPinningRequiredForUnlisted: false, domains: [])
        let loaded = Self.file([pin], domainsConfig: domains, mode: .challenge)
        let result = CachedPins.reconcile(loaded, store: Self.store(.challenge, keys: [keyB]))
        #expect(result.file == loaded && !result.changed)
        #expect(result.unconfirmedDomainsConfig && result.unconfirmed == 0)
        #expect(result.fetchNow)
    }

    @Test("challenge: once a key is gone, a domainsConfig without a key is dropped at once (fail closed)")
    func challengeKeylessDomainsConfigAfterKeyRemoval() throws {
        let keyB = try Vectors.keyB()
        let kept = Pins.make("api.example.com", 0x01, expires: 4_102_444_800, key: keyB.id)
        let gone = Pins.make("api.example.com", 0x02, expires: 4_102_444_800, key: Self.removedKey)
        let loaded = Self.file(
            [kept, gone], domainsConfig: DomainsConfig(sslPinningRequiredForUnlisted: false, domains: []),
            mode: .challenge)
        let result = CachedPins.reconcile(loaded, store: Self.store(.challenge, keys: [keyB]))
        #expect(result.file.list.pins == [kept])
        #expect(result.file.list.domainsConfig == nil)
        #expect(result.droppedDomainsConfig && !result.unconfirmedDomainsConfig)
        #expect(result.changed && result.fetchNow)
    }

    @Test("adding a key drops nothing and changes nothing", arguments: [ListMode.static, .challenge])
    func addingAKey(_ mode: ListMode) throws {
        let keyA = try Vectors.keyA(), keyB = try Vectors.keyB()
        let pin =
            mode == .static ? try Self.signedPin(key: keyB.id) : Pins.make("api.example.com", 0x01, expires: 4_102_444_800, key: keyB.id)
        let loaded = Self.file([pin], mode: mode)
        let result = CachedPins.reconcile(loaded, store: Self.store(mode, keys: [keyA, keyB]))
        #expect(result.file == loaded)
        #expect(!result.changed && !result.fetchNow && result.dropped == 0)
    }
}
