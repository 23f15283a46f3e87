import PinKeeper
import TestSupport
import Testing

/// `Pin.publishedOrder` compares names with memcmp and digests as words; it must stay the order
/// it documents: name by UTF-8 bytes, then latest expiry first, then depth, then fingerprint bytes.
@Suite("Published order")
struct PublishedOrderTests {
    /// The documented order, spelled out on arrays of bytes.
    static func reference(_ a: Pin, _ b: Pin) -> Bool {
        let x = Array(a.name.utf8), y = Array(b.name.utf8)
        if x != y { return x.lexicographicallyPrecedes(y) }
        if a.expires != b.expires { return a.expires > b.expires }
        if a.depth != b.depth { return a.depth < b.depth }
        return a.fingerprint.lexicographicallyPrecedes(b.fingerprint)
    }

    @Test("the same order as the documented comparison, over names that share prefixes and bytes", arguments: [7, 8])
    func matchesTheReference(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        let names = ["", "a", "ab", "abc", "b", "B", "caf\u{E9}", "cafe\u{301}", "\u{1F600}", "a\u{0}", "zz"]
        let pins = (0..<400).map { _ in
            Pin(
                name: names[Int(random.next() % UInt64(names.count))],
                // Few distinct bytes, so that digests often share their first words.
                fingerprint: (0..<32).map { _ in UInt8(random.next() % 3) * 0x7F },
                expires: Int64(random.next() % 3) - 1, depth: Int(random.next() % 2))
        }
        for (a, b) in zip(pins, pins.shuffled(using: &random)) {
            #expect(Pin.publishedOrder(a, b) == Self.reference(a, b), "\(a) \(b)")
        }
    }

    @Test("inPublishedOrder: strictly increasing, so a repeated identity or a swapped pair is not")
    func strictlyIncreasing() {
        let sorted = [Sample.pin("a", 1), Sample.pin("a", 2, expires: Sample.now), Sample.pin("b", 1)]
        #expect(Pin.inPublishedOrder(sorted))
        #expect(Pin.inPublishedOrder([]) && Pin.inPublishedOrder([sorted[0]]))
        #expect(!Pin.inPublishedOrder([sorted[1], sorted[0], sorted[2]]))
        // The same identity twice, whatever the signatures: a duplicate, not an order.
        var again = sorted[0]
        again.signature = "another"
        #expect(!Pin.inPublishedOrder([sorted[0], again, sorted[1], sorted[2]]))
    }
}
