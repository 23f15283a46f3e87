import Foundation
import PinKeeper
import TestSupport
import Testing

/// `CacheFile.encoded()` writes digests and numbers straight into its buffer; the bytes must stay
/// those of the String-based writer it replaced (Foundation's base64, Swift's decimal integers).
@Suite("CacheFile encoding")
struct CacheFileEncodingTests {
    @Test func digestsAndNumbersAreWrittenAsFoundationAndSwiftWriteThem() throws {
        var random = SplitMix64(seed: 0xE1C0DE)
        let extremes: [Int64] = [0, -1, 1, 9, 10, .max, .min, -9_223_372_036_854_775_807, 4_102_444_800]
        var pins: [Pin] = []
        for index in 0..<300 {
            let digest = (0..<32).map { _ in UInt8(truncatingIfNeeded: random.next()) }
            let expires = index < extremes.count ? extremes[index] : Int64(bitPattern: random.next())
            let depth = index % 7 == 0 ? Int(truncatingIfNeeded: Int64(bitPattern: random.next())) : index % 3
            pins.append(Pin(name: "n\(index)", fingerprint: digest, expires: expires, depth: depth))
        }
        let file = CacheFile(list: PinList(pins: pins), metadata: .init(store: "s", source: "u", updated: .min, nextUpdate: .max))
        let text = String(decoding: file.encoded(), as: UTF8.self)
        for pin in pins {
            var line =
                #"{"name": "\#(pin.name)", "fingerprint": "\#(Data(pin.fingerprint).base64EncodedString())", "expires": \#(pin.expires)"#
            if pin.depth != 0 { line += #", "depth": \#(pin.depth)"# }
            #expect(text.contains(line + "}"), "\(line)")
        }
        #expect(text.hasSuffix(#""updated": -9223372036854775808, "nextUpdate": 9223372036854775807}"# + "\n}\n"))
    }

    @Test func namesNeedingEscapesAreStillEscaped() throws {
        let pin = Pin(name: "a\"b\\c\n\u{1}é😀", fingerprint: Sample.digest(1), expires: 1, signature: "s\"")
        let file = CacheFile(list: PinList(pins: [pin]), metadata: .init(store: "s", source: "u", updated: 1, nextUpdate: 2))
        let text = String(decoding: file.encoded(), as: UTF8.self)
        #expect(text.contains(#""name": "a\"b\\c\n\u0001é😀""#))
        #expect(text.contains(#""signature": "s\"""#))
        #expect(try CacheFile(json: file.encoded()) == file)
    }

    @Test("encodedBytes is encoded, byte for byte, also where escapes make it longer than reserved")
    func bytesAreTheEncoding() throws {
        let escaped = String(repeating: "\u{1}\"", count: 40)  // 2 bytes each, 8 written
        let pins = [
            Pin(name: escaped, fingerprint: Sample.digest(1), expires: .min, depth: 3, signature: escaped, key: "0123456789abcdef"),
            Pin(name: "b.example", fingerprint: Sample.digest(2), expires: .max, signature: "MEUCIQ=="),
            Pin(name: "c.example", fingerprint: Sample.digest(3), expires: 0, key: escaped),
        ]
        let domains = DomainsConfig(sslPinningRequiredForUnlisted: true, domains: [.init(name: escaped, sslPinningRequired: false)])
        let file = CacheFile(
            list: PinList(pins: pins, domainsConfig: domains),
            metadata: .init(store: escaped, source: escaped, updated: .min, nextUpdate: .max, mode: .challenge))
        let bytes = file.encodedBytes()
        #expect(bytes == Array(file.encoded()))
        #expect(try CacheFile(json: Data(bytes)) == file)
        #expect(CacheFile(list: PinList(pins: []), metadata: file.metadata).encodedBytes().last == 0x0A)
    }

    @Test("SHA-256 over bytes in place is the array's digest (FIPS 180-2 'abc')")
    func digestInPlace() {
        let abc = Array("abc".utf8)
        let expected: [UInt8] = [
            0xBA, 0x78, 0x16, 0xBF, 0x8F, 0x01, 0xCF, 0xEA, 0x41, 0x41, 0x40, 0xDE, 0x5D, 0xAE, 0x22, 0x23,
            0xB0, 0x03, 0x61, 0xA3, 0x96, 0x17, 0x7A, 0x9C, 0xB4, 0x10, 0xFF, 0x61, 0xF2, 0x00, 0x15, 0xAD,
        ]
        #expect(abc.withUnsafeBytes { SHA256.digest($0) } == expected)
        #expect(SHA256.digest(abc) == expected)
        #expect(Data("abc".utf8).withUnsafeBytes { SHA256.digest($0) } == expected)
    }

    @Test("written in pieces, the file is the same bytes, whatever the piece size")
    func piecesJoinedAreTheEncoding() throws {
        let pins = (0..<40).map { i in
            Pin(
                name: "n\(i).example", fingerprint: Sample.digest(UInt8(i)), expires: Int64(i) * 1_000, depth: i % 3,
                signature: i % 2 == 0 ? "MEUCIQ==" : nil, key: "k")
        }
        let file = CacheFile(
            list: PinList(
                pins: pins,
                domainsConfig: DomainsConfig(sslPinningRequiredForUnlisted: false, domains: [.init(name: "d", sslPinningRequired: true)])),
            metadata: .init(store: "s", source: "u", updated: 1, nextUpdate: 2, mode: .static))
        for size in [1, 7, 100, 1_000, 1 << 20] {
            var pieces: [[UInt8]] = []
            file.encode(inPiecesOf: size) { pieces.append($0) }
            #expect(Array(pieces.joined()) == file.encodedBytes(), "piece size \(size)")
            #expect(pieces.dropLast().allSatisfy { $0.count >= size }, "piece size \(size)")
        }
    }

    @Test("the bytes of a sample file, as every version wrote them")
    func sampleFileBytes() throws {
        let pins = [
            Pin(
                name: "api.example.com", fingerprint: [UInt8](repeating: 1, count: 32), expires: 4_102_444_800, signature: "MEUCIQ==",
                key: "0123456789abcdef"),
            Pin(name: "cdn.example.com", fingerprint: [UInt8](repeating: 0xFE, count: 32), expires: -5, depth: 1),
        ]
        let file = CacheFile(
            list: PinList(
                pins: pins,
                domainsConfig: DomainsConfig(
                    sslPinningRequiredForUnlisted: true, domains: [.init(name: "x.example", sslPinningRequired: false)], key: "k")),
            metadata: .init(
                store: "s1", source: "https://pins.example/list", updated: 1_700_000_000, nextUpdate: 1_700_086_400, mode: .challenge))
        let expected = """
            {
              "fingerprints": [
                {"name": "api.example.com", "fingerprint": "AQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQE=",\
             "expires": 4102444800, "signature": "MEUCIQ==", "key": "0123456789abcdef"},
                {"name": "cdn.example.com", "fingerprint": "/v7+/v7+/v7+/v7+/v7+/v7+/v7+/v7+/v7+/v7+/v4=", "expires": -5, "depth": 1}
              ],
              "domainsConfig": {"sslPinningRequiredForUnlisted": true,\
             "domains": [{"name": "x.example", "sslPinningRequired": false}], "key": "k"},
              "pinkeeper": {"format": 1, "store": "s1", "mode": "challenge",\
             "source": "https://pins.example/list", "updated": 1700000000, "nextUpdate": 1700086400}
            }

            """
        #expect(String(decoding: file.encodedBytes(), as: UTF8.self) == expected)
    }
}
