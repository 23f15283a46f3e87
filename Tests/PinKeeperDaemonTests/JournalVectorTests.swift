import Glibc
@testable import PinKeeperDaemon
import Testing
import CSystemd

/// The bytes JournalLogHandler hands to sd_journal_sendv, read back exactly as libsystemd reads them:
/// `iov_len` bytes from `iov_base`, nothing more.
@Suite("Journal iovecs")
struct JournalVectorTests {
    static func sentFields(_ entry: JournalEntry) -> [[UInt8]] {
        JournalLogHandler.withFieldVectors(entry) { vectors, count in
            (0..<Int(count)).map { i in
                Array(UnsafeRawBufferPointer(start: vectors[i].iov_base, count: vectors[i].iov_len))
            }
        }
    }

    @Test("each iovec covers exactly the bytes of NAME=value, even with a NUL inside the value")
    func exactBytes() {
        // Long enough that a copy cut at the NUL is far shorter than the length passed.
        let value = "a\u{0}" + String(repeating: "b", count: 200) + "\u{1b}é"
        let entry = JournalEntry(fields: [("MESSAGE", "hello"), ("PINKEEPER_NAME", value), ("PINKEEPER_EMPTY", "")])
        #expect(
            Self.sentFields(entry) == [
                Array("MESSAGE=hello".utf8), Array("PINKEEPER_NAME=\(value)".utf8),
                Array("PINKEEPER_EMPTY=".utf8),
            ])
    }
}
