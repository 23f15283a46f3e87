import Foundation
import Logging
@testable import PinKeeperDaemon
import TestSupport
import Testing

/// The lines on stderr when it is not the journal (`log_format`): logfmt or JSON, one line per
/// event, the journal entry's fields under the names docs/journal.md lists.
@Suite("Log lines on stderr")
struct LogLineTests {
    static let failed: Logger.Metadata = [
        "event": "update-failed", "store": "banking", "result": "http-error", "pins": "2",
        "next_update": "2026-11-22T03:01:10Z", "retry_in": "31s", "reason": "the server answered HTTP 500",
    ]
    static let time: Int64 = 1_763_770_000_042  // 2025-11-22T00:06:40.042Z

    static func line(_ metadata: Logger.Metadata = failed, level: Logger.Level = .error, message: String = "update failed") -> LogLine {
        LogLine(milliseconds: time, level: level, message: message, metadata: metadata)
    }

    static func journal(_ metadata: Logger.Metadata, level: Logger.Level = .error, message: String = "update failed") -> JournalEntry {
        JournalEntry(level: level, message: message, metadata: metadata, file: "F.swift", function: "f()", line: 1)
    }

    static func json(_ text: String) throws -> [String: String] {
        let object = try JSONSerialization.jsonObject(with: Data(text.utf8))
        return try #require(object as? [String: String], "not an object of strings: \(text)")
    }

    @Test("logfmt: time, level, msg, event and message_id, then the fields sorted by name")
    func logfmt() {
        #expect(
            Self.line().text(.logfmt)
                == "time=2025-11-22T00:06:40.042Z level=error msg=\"update failed\" event=update-failed "
                + "message_id=41ed2e1a9bbd459d99ebcaea1209e405 next_update=2026-11-22T03:01:10Z pins=2 "
                + "reason=\"the server answered HTTP 500\" result=http-error retry_in=31s store=banking")
    }

    @Test("json: the same fields in the same order, as one object of strings")
    func json() throws {
        let text = Self.line().text(.json)
        #expect(
            text
                == #"{"time":"2025-11-22T00:06:40.042Z","level":"error","msg":"update failed","event":"update-failed","#
                + #""message_id":"41ed2e1a9bbd459d99ebcaea1209e405","next_update":"2026-11-22T03:01:10Z","pins":"2","#
                + #""reason":"the server answered HTTP 500","result":"http-error","retry_in":"31s","store":"banking"}"#)
        #expect(try Self.json(text)["store"] == "banking")
    }

    @Test("an event without a MESSAGE_ID has neither event nor message_id; an unknown event keeps its name only")
    func eventNames() {
        #expect(
            Self.line(["store": "a"], level: .info, message: "stopping").text(.logfmt)
                == "time=2025-11-22T00:06:40.042Z level=info msg=stopping store=a")
        #expect(Self.line(["event": "made-up"])["event"] == "made-up")
        #expect(Self.line(["event": "made-up"])["message_id"] == nil)
    }

    @Test("level names, as the journal's priorities", arguments: JournalEntryTests.levels)
    func levels(level: Logger.Level, priority: String) {
        #expect(Self.line([:], level: level)["level"] == "\(level)")
        #expect(Self.journal([:], level: level)["PRIORITY"] == priority)
    }

    @Test("every PINKEEPER_ field of the journal entry is in the line under its lower-case name without the prefix, with the same value")
    func journalMapping() {
        let metadata: Logger.Metadata = Self.failed.merging([
            "target": "api.example.com:443", "leaf_fingerprint": "q83vEjRWeJA=", "exit_status": "3", "Odd-Key é": "x",
        ]) { $1 }
        let line = Self.line(metadata), entry = Self.journal(metadata)
        for (field, value) in entry.fields where field.hasPrefix("PINKEEPER_") {
            let name = field.dropFirst("PINKEEPER_".count).lowercased()
            #expect(line[name] == value, "\(field)")
        }
        #expect(line["message_id"] == entry["MESSAGE_ID"])
        #expect(line["odd_key__"] == "x")
        #expect(line.fields.count == 5 + entry.fields.filter { $0.0.hasPrefix("PINKEEPER_") }.count)
    }

    @Test("a field that would take one of the line's own names keeps its journal prefix")
    func ownNames() {
        let line = Self.line(["level": "deep", "msg": "m", "time": "t", "message_id": "x", "": "empty"])
        #expect(line["level"] == "error" && line["pinkeeper_level"] == "deep")
        #expect(line["msg"] == "update failed" && line["pinkeeper_msg"] == "m")
        #expect(line["pinkeeper_time"] == "t" && line["pinkeeper_message_id"] == "x" && line["pinkeeper_"] == "empty")
        #expect(Set(line.fields.map(\.0)).count == line.fields.count)
    }

    @Test("milliseconds in RFC 3339 UTC, before 1970 too")
    func timestamps() {
        #expect(Timestamp.iso(milliseconds: 0) == "1970-01-01T00:00:00.000Z")
        #expect(Timestamp.iso(milliseconds: 1_763_770_000_999) == "2025-11-22T00:06:40.999Z")
        #expect(Timestamp.iso(milliseconds: -1) == "1969-12-31T23:59:59.999Z")
        let now = Timestamp.nowMilliseconds(), wall = Int64(Date().timeIntervalSince1970 * 1000)
        #expect(abs(now - wall) < 1000)
    }

    /// Any scalar at all, weighted towards what breaks lines and quoting.
    static func hostileText(_ random: inout SplitMix64) -> String {
        let nasty: [Unicode.Scalar] = [
            "\n", "\r", "\t", "\0", "\u{1b}", "\"", "\\", "=", " ", "\u{85}", "\u{2028}", "\u{202e}", "\u{7f}", "é", "😀", "{", "}", ",",
        ]
        var text = ""
        for _ in 0..<Int.random(in: 0...12, using: &random) {
            if Bool.random(using: &random) {
                text.unicodeScalars.append(nasty.randomElement(using: &random)!)
            } else if let scalar = Unicode.Scalar(UInt32.random(in: 0...0x2FFFF, using: &random)) {
                text.unicodeScalars.append(scalar)
            }
        }
        return text
    }

    @Test("hostile messages, keys and values: one line without a control character; logfmt and JSON read back the journal's values")
    func hostileValues() throws {
        var random = SplitMix64(seed: 22)
        for round in 0..<500 {
            var metadata: Logger.Metadata = ["event": "\(Self.hostileText(&random))"]
            // Distinct names: two keys that differ only in what the field names replace share a name, as in the journal.
            for index in 0..<3 { metadata["k\(index)_" + Self.hostileText(&random)] = "\(Self.hostileText(&random))" }
            let message = Self.hostileText(&random)
            let line = Self.line(metadata, message: message), entry = Self.journal(metadata, message: message)
            for format in LogFormat.allCases {
                let text = line.text(format)
                #expect(!LogInjectionTests.hasControl(text), "round \(round): \(text)")
            }
            let parsed = try #require(LogfmtLine(line.text(.logfmt)), "round \(round): \(line.text(.logfmt))")
            let decoded = try Self.json(line.text(.json))
            #expect(parsed.pairs.count == line.fields.count && decoded.count == line.fields.count, "round \(round)")
            for (name, value) in line.fields {
                #expect(parsed[name] == value && decoded[name] == value, "round \(round): \(name)")
            }
            #expect(parsed["msg"] == LogText.escaped(message))
            for (field, value) in entry.fields where field.hasPrefix("PINKEEPER_") {
                #expect(parsed[LogLine.name(String(field.dropFirst("PINKEEPER_".count)))] == value, "round \(round): \(field)")
            }
        }
    }

    @Test("a hook's invalid UTF-8 arrives as U+FFFD in a JSON line that parses")
    func invalidUTF8() throws {
        var output = CapturedOutput(limit: 64)
        output.append([0x6F, 0x6B, 0xFF, 0xC3, 0x28, 0x0A, 0xED, 0xA0, 0x80][...])
        let text = Self.line(["stdout": "\(output.text)"], level: .info, message: "change hook finished").text(.json)
        #expect(String(validating: Array(text.utf8), as: UTF8.self) == text)
        #expect(try Self.json(text)["stdout"] == "ok\u{FFFD}\u{FFFD}(\\n\u{FFFD}\u{FFFD}\u{FFFD}")
    }
}
