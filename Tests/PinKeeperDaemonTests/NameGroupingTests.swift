import PinKeeper
@testable import PinKeeperDaemon
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
}
