@testable import PinKeeperDaemon
import Testing

@Suite("Timestamp")
struct TimestampTests {
    @Test func ordinaryTime() {
        #expect(Timestamp.iso(1_795_917_600) == "2026-11-29T02:00:00Z")
    }

    /// gmtime_r succeeds here with tm_year = 2147481847; adding 1900 in Int32 used to trap.
    @Test func yearBeyondInt32DoesNotTrap() {
        #expect(Timestamp.iso(67_767_979_386_916_800).hasPrefix("2147483747-"))
    }
}
