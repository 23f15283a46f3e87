import Logging
@testable import PinKeeperDaemon
import Testing

@Suite("Journal entries")
struct JournalEntryTests {
    private func entry(_ metadata: Logger.Metadata, level: Logger.Level = .error) -> JournalEntry {
        JournalEntry(
            level: level, message: "update failed", metadata: metadata, file: "StoreUpdater.swift",
            function: "update(_:)", line: 42)
    }

    @Test("fields, priorities and message ids")
    func fields() {
        let e = entry([
            "event": "update-failed", "store": "banking", "result": "http-error", "pins": "3",
            "next_update": "2026-11-29T00:00:00Z",
        ])
        #expect(e["MESSAGE"] == "update failed next_update=2026-11-29T00:00:00Z pins=3 result=http-error store=banking")
        #expect(e["PRIORITY"] == "3")
        #expect(e["SYSLOG_IDENTIFIER"] == "pinkeeper")
        #expect(e["MESSAGE_ID"] == "41ed2e1a9bbd459d99ebcaea1209e405")
        #expect(e["PINKEEPER_STORE"] == "banking")
        #expect(e["PINKEEPER_RESULT"] == "http-error")
        #expect(e["PINKEEPER_PINS"] == "3")
        #expect(e["PINKEEPER_NEXT_UPDATE"] == "2026-11-29T00:00:00Z")
        #expect(e["CODE_FILE"] == "StoreUpdater.swift")
        #expect(e["CODE_LINE"] == "42")
        #expect(e["CODE_FUNC"] == "update(_:)")
        #expect(e["PINKEEPER_EVENT"] == nil)
    }

    static let levels: [(Logger.Level, String)] = [
        (.trace, "7"), (.debug, "7"), (.info, "6"), (.notice, "5"), (.warning, "4"), (.error, "3"), (.critical, "2"),
    ]

    @Test("syslog priorities", arguments: levels)
    func priorities(level: Logger.Level, priority: String) {
        #expect(entry([:], level: level)["PRIORITY"] == priority)
    }

    @Test("metadata keys are sanitised to journald's field-name rules")
    func sanitising() {
        #expect(JournalEntry.fieldName("store") == "PINKEEPER_STORE")
        #expect(JournalEntry.fieldName("retry-in") == "PINKEEPER_RETRY_IN")
        #expect(JournalEntry.fieldName("cache.directory é") == "PINKEEPER_CACHE_DIRECTORY__")
        #expect(JournalEntry.fieldName(String(repeating: "x", count: 100)).count == 64)
        for name in ["a b", "ü", "9lives", "_x"] {
            let field = JournalEntry.fieldName(name)
            #expect(field.allSatisfy { $0.isASCII && ($0.isUppercase || $0.isNumber || $0 == "_") })
            #expect(field.first?.isLetter == true)
        }
    }

    @Test("every event has a distinct 128-bit id")
    func messageIDs() {
        let ids = LogEventID.allCases.map(\.messageID)
        #expect(Set(ids).count == ids.count)
        #expect(ids.allSatisfy { $0.count == 32 && $0.allSatisfy(\.isHexDigit) })
    }

    @Test("stderr is the journal only when JOURNAL_STREAM names it")
    func journalDetection() {
        #expect(!JournalLogHandler.stderrIsJournal(environment: [:]))
        #expect(!JournalLogHandler.stderrIsJournal(environment: ["JOURNAL_STREAM": "1:2"]))
        #expect(!JournalLogHandler.stderrIsJournal(environment: ["JOURNAL_STREAM": "garbage"]))
    }
}
