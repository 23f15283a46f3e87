import Foundation
import PinKeeper
import Testing

/// `pinkeeper.mode` and the per-entry `key`: what a reader may trust from a static-mode file
/// (docs/protocol.md §6, static mode), and what pinkeeper records for itself.
@Suite("Cache files: list mode and keys")
struct CacheModeTests {
    static let now = Sample.now
    static let pinningOff = DomainsConfig(sslPinningRequiredForUnlisted: false, domains: [])

    static func file(_ mode: ListMode?, pins: [Pin], domainsConfig: DomainsConfig? = nil) -> CacheFile {
        CacheFile(
            list: PinList(pins: pins, domainsConfig: domainsConfig),
            metadata: .init(
                store: "banking", source: "https://pins.example.com/list", updated: now - 60,
                nextUpdate: now + 3_600, mode: mode))
    }

    @Test("mode, the pins' key and domainsConfig's key are written and read back")
    func roundTrip() throws {
        let pins = [Sample.pin("api.example.com", 1, signature: "MEUCIQ==")].map { pin -> Pin in
            var tagged = pin
            tagged.key = "00112233aabbccdd"
            return tagged
        }
        let challenge = Self.file(
            .challenge, pins: pins,
            domainsConfig: DomainsConfig(
                sslPinningRequiredForUnlisted: true, domains: [], key: "00112233aabbccdd"))
        let text = String(decoding: challenge.encoded(), as: UTF8.self)
        #expect(text.contains(#""pinkeeper": {"format": 1, "store": "banking", "mode": "challenge", "source""#), "\(text)")
        #expect(text.contains(#""signature": "MEUCIQ==", "key": "00112233aabbccdd"}"#))
        #expect(text.contains(#""domains": [], "key": "00112233aabbccdd"}"#))
        #expect(try CacheFile(json: challenge.encoded()) == challenge)
        let stat = Self.file(.static, pins: pins)
        #expect(try CacheFile(json: stat.encoded()) == stat)
    }

    @Test("a static-mode file is read without domainsConfig and without entries that carry a depth")
    func staticModeIgnoresUnsignedMembers() throws {
        let deep = Sample.pin("api.example.com", 2, depth: 1)
        let bytes = Self.file(.static, pins: [Sample.pin("api.example.com", 1), deep], domainsConfig: Self.pinningOff).encoded()
        let read = try CacheFile(json: bytes)
        #expect(read.list.domainsConfig == nil)
        #expect(read.list.pins == [Sample.pin("api.example.com", 1)])

        let fixture = CacheFixture()
        fixture.replace(with: bytes)
        let reader = try CacheReader(path: fixture.path)
        #expect(reader.verdict(host: "unlisted.example.com", fingerprint: Sample.digest(7), now: Self.now) == .empty)
        #expect(reader.verdict(host: "api.example.com", fingerprint: Sample.digest(2), depth: 1, now: Self.now) == .empty)
        #expect(reader.verdict(host: "api.example.com", fingerprint: Sample.digest(1), now: Self.now) == .trusted)
        #expect(reader.verdict(host: "api.example.com", verifiedChain: [[0x30], [0x31]], now: Self.now) == .untrusted)
    }

    @Test(
        "challenge-mode files and files without a mode (older pinkeeper) keep domainsConfig and depth",
        arguments: [ListMode.challenge, nil])
    func otherFilesAreReadAsBefore(_ mode: ListMode?) throws {
        let deep = Sample.pin("api.example.com", 2, depth: 1)
        let bytes = Self.file(mode, pins: [deep], domainsConfig: Self.pinningOff).encoded()
        #expect(String(decoding: bytes, as: UTF8.self).contains("\"mode\"") == (mode != nil))
        let fixture = CacheFixture()
        fixture.replace(with: bytes)
        let reader = try CacheReader(path: fixture.path)
        #expect(reader.verdict(host: "unlisted.example.com", fingerprint: Sample.digest(7), now: Self.now) == .trusted)
        #expect(reader.snapshot().cache?.list.pins == [deep])
    }

    @Test("an unknown mode is a format this version does not read: a reader cannot know what in it is signed")
    func unknownMode() {
        let data = Sample.document(
            [Sample.entry()], extra: #","pinkeeper":{"format":1,"store":"s","mode":"dynamic","source":"u","updated":1,"nextUpdate":2}"#)
        let error = #expect(throws: PinListError.self) { try CacheFile(json: data) }
        #expect(error?.code == .unsupportedFormat)
        #expect(error?.reason == #"pinkeeper.mode "dynamic" is not a mode this version reads"#)
    }

    @Test("a server's list cannot name a key: `key` is read from cache files only")
    func serverListsCarryNoKey() throws {
        let data = Sample.document(
            [Sample.entry(extra: #","key":"00112233aabbccdd""#)],
            extra: #","domainsConfig":{"sslPinningRequiredForUnlisted":true,"domains":[],"key":"00112233aabbccdd"}"#)
        let list = try PinList(json: data)
        #expect(list.pins.first?.key == nil)
        #expect(list.domainsConfig?.key == nil)
    }
}
