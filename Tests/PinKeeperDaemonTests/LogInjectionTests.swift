import Logging
@testable import PinKeeperDaemon
import Testing
import Foundation

/// A value chosen by a server (an entry name ends up in `reason`) must not forge, hide or
/// restyle log lines, on stderr or in the journal.
@Suite("Log injection")
struct LogInjectionTests {
    static let hostile = "evil\nINFO: forged\u{0}x\u{1b}[2J"
    static let hostileEscaped = #"evil\nINFO: forged\u{0}x\u{1b}[2J"#
    static let reason = "the entry '\(hostile)' (expires 1) has no signature"

    /// True when `text` holds a character a terminal or a line-based reader acts on.
    static func hasControl(_ text: String) -> Bool {
        text.unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) || $0 == "\u{2028}" || $0 == "\u{2029}" }
    }

    static let cases: [(String, String)] = [
        ("plain api.example.com", "plain api.example.com"),
        ("a\nb\rc\td", #"a\nb\rc\td"#),
        ("nul\u{0}end", #"nul\u{0}end"#),
        ("esc\u{1b}[31mred", #"esc\u{1b}[31mred"#),
        ("del\u{7f} c1\u{85}\u{9b}", #"del\u{7f} c1\u{85}\u{9b}"#),
        ("ls\u{2028}ps\u{2029}", #"ls\u{2028}ps\u{2029}"#),
        ("bidi\u{202e}txt.exe", #"bidi\u{202e}txt.exe"#),
        (#"back\slash \n spelled"#, #"back\\slash \\n spelled"#),
        ("ümlaut 😀 日本", "ümlaut 😀 日本"),
    ]

    @Test("control characters become escapes; backslashes are doubled; other text is kept", arguments: cases)
    func escaping(raw: String, escaped: String) {
        #expect(LogText.escaped(raw) == escaped)
        #expect(!Self.hasControl(LogText.escaped(raw)))
    }

    @Test("every C0, DEL and C1 character is escaped")
    func everyControl() {
        for value in Array(0x00...0x1F) + Array(0x7F...0x9F) {
            let text = "x" + String(Unicode.Scalar(UInt32(value))!) + "y"
            #expect(!Self.hasControl(LogText.escaped(text)), "U+\(String(value, radix: 16))")
        }
    }

    @Test("quoting: a value with a space or quote is one token, a simple value stays bare")
    func quoting() {
        #expect(LogText.quoted("banking") == "banking")
        #expect(LogText.quoted("") == #""""#)
        #expect(LogText.quoted(#"say "hi"\now"#) == #""say \"hi\"\\now""#)
        #expect(LogText.quoted("a=b\n") == #""a=b\n""#)
    }

    /// A combining mark joins the space, quote or `=` before it into one `Character`; the scalar is
    /// still there, so it must still quote the value and be escaped, or the value could end early
    /// (`reason=x \u{301}forged=1` read as two keys) or carry a bare quote.
    @Test("quoting: a space, quote or = followed by a combining mark still counts")
    func quotingCombiningMarks() {
        #expect(LogText.quoted("x \u{301}y") == "\"x \u{301}y\"")
        #expect(LogText.quoted("a=\u{301}b") == "\"a=\u{301}b\"")
        #expect(LogText.quoted("a\"\u{301}b") == "\"a\\\"\u{301}b\"")
    }

    @Test("the line for a hostile entry name is one line with the name escaped, in both formats", arguments: LogFormat.allCases)
    func line(format: LogFormat) {
        let line = LogLine(
            milliseconds: 0, level: .error, message: "update failed",
            metadata: ["store": "s", "reason": "\(Self.reason)", "event": "update-failed"]
        ).text(format)
        #expect(line.contains("the entry '\(Self.hostileEscaped.replacingOccurrences(of: "\\", with: "\\\\"))' (expires 1)"), "\(line)")
        #expect(!line.contains("\n"))
        #expect(!Self.hasControl(line))
    }

    @Test("a hostile message or key is escaped too")
    func messageAndKey() {
        let line = LogLine(milliseconds: 0, level: .info, message: "got \(Self.hostile)", metadata: ["k\ney": "v"]).text(.logfmt)
        let message = "got \(Self.hostileEscaped)".replacingOccurrences(of: "\\", with: "\\\\")
        #expect(line == "time=1970-01-01T00:00:00.000Z level=info msg=\"\(message)\" k_ey=v")
    }

    @Test("every journal field of a hostile entry is escaped, MESSAGE too")
    func journalFields() {
        let entry = JournalEntry(
            level: .error, message: "update failed",
            metadata: ["store": "s", "reason": "\(Self.reason)", "name": "\(Self.hostile)"],
            file: "F.swift", function: "f()", line: 1)
        #expect(entry["PINKEEPER_NAME"] == Self.hostileEscaped)
        #expect(entry["PINKEEPER_REASON"] == "the entry '\(Self.hostileEscaped)' (expires 1) has no signature")
        #expect(
            entry["MESSAGE"]
                == "update failed name=\"\(Self.hostileEscaped)\" reason=\"the entry '\(Self.hostileEscaped)'"
                + " (expires 1) has no signature\" store=s"
        )
        #expect(entry.fields.allSatisfy { !Self.hasControl($0.1) })
        // And the bytes handed to libsystemd are those fields, with nothing after them.
        #expect(JournalVectorTests.sentFields(entry) == entry.fields.map { Array("\($0.0)=\($0.1)".utf8) })
    }
}
