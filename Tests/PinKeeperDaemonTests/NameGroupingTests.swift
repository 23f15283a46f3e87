import PinKeeper
@testable import PinKeeperDaemon
import TestSupport
import Testing

/// The schedule groups pins by name as readers compare names (`PinName`): two spellings that
/// `String ==` equates are two names, and ASCII case makes no new name.
@Suite("Names in the schedule")
struct NameGroupingTests {
    let now: Int64 = 1_700_000_000
    let policy = UpdatePolicy()

    @Test("a precomposed and a decomposed name each keep their own expiry")
    func canonicallyEquivalentNamesAreTwo() {
        let soon = Pin(name: "caf\u{E9}.example", fingerprint: [UInt8](repeating: 1, count: 32), expires: now + 3_600)
        let later = Pin(name: "cafe\u{301}.example", fingerprint: [UInt8](repeating: 2, count: 32), expires: now + 300 * 86_400)
        let pins = [soon, later].sorted(by: Pin.publishedOrder)
        // The early-expiry rule applies to the soon name: an eighth of the hour left.
        #expect(NextUpdate.interval(pins: pins, now: now, policy: policy) == 450)
        #expect(ExpiringPins.soonest(pins, now: now) == soon)
    }

    @Test("names differing only in ASCII case are one name: its latest pin counts")
    func asciiCaseIsOneName() {
        let old = Pin(name: "API.example.com", fingerprint: [UInt8](repeating: 1, count: 32), expires: now + 3_600)
        let replacement = Pin(name: "api.example.com", fingerprint: [UInt8](repeating: 2, count: 32), expires: now + 300 * 86_400)
        let pins = [old, replacement].sorted(by: Pin.publishedOrder)
        #expect(NextUpdate.interval(pins: pins, now: now, policy: policy) == policy.periodicUpdateInterval)
        #expect(ExpiringPins.soonest(pins, now: now) == replacement)
    }

    @Test("LatestPins groups as a dictionary keyed by PinName does, ties going to the first pin")
    func latestPinsAgainstADictionary() {
        var random = SplitMix64(seed: 0x1A7E5)
        let spellings = ["a.example", "A.example", "a.EXAMPLE", "b.example", "caf\u{E9}.x", "cafe\u{301}.x", "CAF\u{C9}.x", "", "b"]
        for round in 0..<50 {
            let pins = (0..<(round * 7 % 60)).map { i in
                Pin(
                    name: spellings[Int(random.next() % UInt64(spellings.count))], fingerprint: [UInt8](repeating: UInt8(i), count: 32),
                    expires: Int64(random.next() % 5))
            }
            // Per name, the first pin of the latest expiry among those `counted` admits.
            func expected(_ counted: (Int) -> Bool) -> [Int] {
                var latest: [PinName: Int] = [:]
                for (index, pin) in pins.enumerated() where counted(index) {
                    if let known = latest[PinName(pin.name)], pins[known].expires >= pin.expires { continue }
                    latest[PinName(pin.name)] = index
                }
                return latest.values.sorted()
            }
            #expect(LatestPins.indices(pins).sorted() == expected { _ in true }, "round \(round)")
            let odd = { (index: Int) in pins[index].fingerprint[0] % 2 == 1 }
            #expect(LatestPins.indices(pins, where: odd).sorted() == expected(odd), "round \(round), odd fingerprints only")
        }
    }
}
