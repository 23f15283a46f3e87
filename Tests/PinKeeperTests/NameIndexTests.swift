import PinKeeper
import TestSupport
import Testing

/// The reader's index of pins by name (`PinIndex`: a hash of each name's ASCII-folded bytes,
/// chains of positions) must answer exactly as a scan of every pin with `PinName.same` does,
/// whatever the order of the file, the case and length of the names and their collisions.
@Suite("CacheReader: the name index answers as a scan of every pin")
struct NameIndexTests {
    let now = Sample.now

    /// Names that differ only in ASCII case (the same name), in non-ASCII case or canonical
    /// form (other names), and in bytes past the first eight or sixty-four (the hash's words).
    static let names: [String] = {
        let long = String(repeating: "segment-", count: 9)  // 72 bytes
        return [
            "api.example.com", "API.Example.COM", "cdn.example.com", "caf\u{E9}.example", "cafe\u{301}.example",
            "\u{212A}elvin.example", "kelvin.example", "K.example", "k.example", "", "a", "A",
            long + "x.example", long.uppercased() + "X.EXAMPLE", long + "y.example", "\u{1F600}.example",
        ]
    }()

    @Test(
        "every name's pins, shuffled or in published order, with fallback pins: the same verdicts as a scan",
        arguments: [1, 2, 3], [false, true])
    func agreesWithAScan(seed: UInt64, published: Bool) throws {
        var random = SplitMix64(seed: seed)
        // Many more names than the table's first size, so that probing and growth take part.
        let names = Self.names + (0..<700).map { "host\($0).example.com" }
        var cached: [Pin] = []
        for _ in 0..<2_000 {
            let name = names[Int(random.next() % UInt64(names.count))]
            cached.append(Sample.pin(name, UInt8(truncatingIfNeeded: random.next() % 50)))
        }
        let fallback = (0..<40).map { _ in
            Sample.pin(names[Int(random.next() % UInt64(names.count))], UInt8(truncatingIfNeeded: 50 + random.next() % 10))
        }
        let fixture = CacheFixture()
        // As given (a name's pins apart), or sorted as the daemon publishes (a name's pins together).
        fixture.publish(published ? cached.sorted(by: Pin.publishedOrder) : cached)
        let reader = try CacheReader(path: fixture.path, fallbackPins: fallback)
        // The scan, once: each name's fingerprints (PinName is the comparison the index must keep).
        var byName: [PinName: Set<[UInt8]>] = [:]
        for pin in cached + fallback { byName[PinName(pin.name), default: []].insert(pin.fingerprint) }
        // Each name is asked as the leaf's common name N, beside a host without pins: N is
        // compared as it is, whatever its letters, while a host is first put in its one form.
        // An empty name is never asked (an empty host is refused: nothing to decide by).
        for name in names.filter({ !$0.isEmpty }) + ["absent.example", "HOST1.EXAMPLE.COM", "host1.example.com."] {
            let fingerprints = byName[PinName(name)] ?? []
            for byte in Array(UInt8(0)..<60) + [99] {  // every fingerprint in use, and one not
                let expected: Verdict =
                    fingerprints.isEmpty ? .empty : fingerprints.contains(Sample.digest(byte)) ? .trusted : .untrusted
                let answer = reader.verdict(host: "unpinned.example", commonName: name, fingerprint: Sample.digest(byte), now: now)
                #expect(answer == expected, "\(name) \(byte)")
                guard HostName.canonical(name) == name else { continue }
                #expect(reader.verdict(host: name, fingerprint: Sample.digest(byte), now: now) == expected, "\(name) \(byte)")
            }
        }
    }

    @Test("a question's fingerprint that is not 32 bytes matches no pin")
    func shortFingerprint() throws {
        let fixture = CacheFixture()
        fixture.publish([Sample.pin("api.example.com", 1)])
        let reader = try CacheReader(path: fixture.path)
        #expect(reader.verdict(host: "api.example.com", fingerprint: Array(Sample.digest(1).prefix(31)), now: now) == .untrusted)
        #expect(reader.verdict(host: "api.example.com", fingerprint: [], now: now) == .untrusted)
        #expect(reader.verdict(host: "other.example.com", fingerprint: [], now: now) == .empty)
    }
}
