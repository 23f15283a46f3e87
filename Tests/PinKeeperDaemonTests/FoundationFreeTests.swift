import Foundation
@testable import PinKeeperDaemon
import TestSupport
import Testing

/// The helpers that replaced Foundation calls in Sources/ (issue 13) give what Foundation gave.
/// These tests import Foundation only to compute the expected values.
@Suite("Foundation-free helpers")
struct FoundationFreeTests {
    /// Rounding ties (exact in binary, and not), negatives, zero, huge, tiny, and special values.
    static let numbers: [Double] = [
        0, -0.0, 0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 0.05, 0.15, 0.25, 0.35, 0.45, 0.125, 0.375, 1.0005, 1.0015,
        0.0005, 0.0015, 0.0025, 2.675, 1.005, 999.95, 999.9999, 9.995, 123.456, -123.456, 1e15, 1e20, -1e20,
        1e300, .greatestFiniteMagnitude, .leastNonzeroMagnitude, 1e-7, 12_345_678.901, .pi, -.pi, .infinity, -.infinity, .nan,
    ]

    @Test("cFormat gives String(format:)'s digits and rounding", arguments: ["%.3fs", "%.1f", "%.0f", "%.2f", "%8.1f", "%8.2f"])
    func cFormatMatches(_ format: String) {
        var values = Self.numbers
        var generator = SplitMix64(seed: 13)
        values += (0..<2_000).map { _ in Double.random(in: -1e6...1e6, using: &generator) }
        values += (0..<2_000).map { _ in Double(Int.random(in: -100_000...100_000, using: &generator)) / 1_000 }
        values += (0..<2_000).map { _ in Double(Int.random(in: -100_000...100_000, using: &generator)) / 20 }
        let differing = values.filter { cFormat(format, $0) != String(format: format, $0) }
        #expect(differing.isEmpty, "\(differing.prefix(10))")
    }

    @Test("cFormat with integers and text longer than any first guess")
    func cFormatIntegers() {
        for value in [0, 7, 42, 999, 1_000, -5, Int.max, Int.min] {
            #expect(cFormat("s%03ld", value) == String(format: "s%03ld", value))
            #expect(
                cFormat("%8.2f  (peak %ld at minute %ld)", 1.5, value, value)
                    == String(format: "%8.2f  (peak %ld at minute %ld)", 1.5, value, value))
        }
        #expect(cFormat("%8.1f ms  (min %.1f)", 2.25, -0.05) == String(format: "%8.1f ms  (min %.1f)", 2.25, -0.05))
        #expect(cFormat("%.300f", 1.0) == String(format: "%.300f", 1.0))
    }

    @Test("hook durations read as before: milliseconds with three decimals")
    func hookSeconds() {
        for milliseconds in [0, 1, 5, 10, 999, 1_000, 1_001, 1_500, 29_999, 30_000, 86_400_000, 123_456_789] {
            #expect(ChangeHooks.seconds(.milliseconds(milliseconds)) == String(format: "%.3fs", Double(milliseconds) / 1_000))
        }
    }

    @Test("trimmingBlanks trims exactly Foundation's .whitespaces and .whitespacesAndNewlines")
    func trimmingSets() {
        let differing = (UInt32(0)...0x10FFFF).compactMap(Unicode.Scalar.init).filter { scalar in
            String(scalar).trimmingBlanks().isEmpty != CharacterSet.whitespaces.contains(scalar)
                || String(scalar).trimmingBlanks(newlines: true).isEmpty != CharacterSet.whitespacesAndNewlines.contains(scalar)
        }
        #expect(differing.isEmpty, "\(differing.prefix(10).map { "U+" + String($0.value, radix: 16) })")
    }

    @Test(
        "trimmingBlanks on header-like values",
        arguments: [
            "", " ", "7", " 7 ", "\t120\t", " \r\n", "\"etag\"\r\n", " a b ", "\u{3000}x\u{A0}", "\u{85}x\u{2028}\u{2029}",
            " \u{301}x", "x \u{301}", "\u{FEFF}x", "\u{200B}x\u{200B}", "é ", " 日本 ",
        ])
    func trimming(_ text: String) {
        #expect(text.trimmingBlanks() == text.trimmingCharacters(in: .whitespaces))
        #expect(text.trimmingBlanks(newlines: true) == text.trimmingCharacters(in: .whitespacesAndNewlines))
        #expect(text[...].trimmingBlanks() == text.trimmingCharacters(in: .whitespaces))
    }

    @Test(
        "replacingEvery and scalarRange agree with Foundation on the texts the daemon edits",
        arguments: [
            ("say \"hi\" = \"x\"", "\"", "\\\""), ("\"\"\"", "\"", "\\\""), ("no quote", "\"", "\\\""), ("", "\"", "\\\""),
            ("proxy alice:s3cret@host failed; alice:s3cret again", "alice:s3cret", "***"), ("aaaa", "aa", "b"), ("aaa", "aa", "b"),
            ("abc", "", "x"), ("http://user:pw@h:1/", "://", "!"), ("no scheme", "://", "!"), ("é://ü", "://", "!"),
        ])
    func replacing(_ text: String, _ needle: String, _ replacement: String) {
        #expect(text.replacingEvery(needle, with: replacement) == text.replacingOccurrences(of: needle, with: replacement))
        let ours = text.scalarRange(of: needle).map { text.utf8.distance(from: text.startIndex, to: $0.lowerBound) }
        let theirs = needle.isEmpty ? nil : text.range(of: needle).map { text.utf8.distance(from: text.startIndex, to: $0.lowerBound) }
        #expect(ours == theirs)
    }

    /// Where a needle's last character takes a combining mark, `Character` comparison would miss it:
    /// a scrubbed secret or an escaped quote must still be found.
    @Test("a needle followed by a combining mark is still replaced")
    func combiningMark() {
        #expect("pw\u{301}".replacingEvery("pw", with: "***") == "***\u{301}")
        #expect("a\"\u{301}b".replacingEvery("\"", with: "\\\"") == "a\\\"\u{301}b")
        #expect("http:/\u{301}/x://y".scalarRange(of: "://") != nil)
    }

    @Test("padded(to:) pads table cells as padding(toLength:) did", arguments: ["", "a", "banking", "STORE", "in 3 h 12 min"])
    func padding(_ cell: String) {
        for width in cell.count...(cell.count + 12) {
            #expect(cell.padded(to: width) == cell.padding(toLength: width, withPad: " ", startingAt: 0))
        }
    }

    @Test(
        "declaredFormat reads pinkeeper.format as JSONSerialization did",
        arguments: [
            #"{"pinkeeper": {"format": 2}}"#, #"{"pinkeeper": {"format": 1, "store": "x"}, "fingerprints": []}"#,
            #"{"pinkeeper": {"format": 2.0}}"#, #"{"pinkeeper": {"format": 2.5}}"#, #"{"pinkeeper": {"format": "2"}}"#,
            #"{"pinkeeper": {"format": -3}}"#, #"{"pinkeeper": {"format": 1e2}}"#, #"{"pinkeeper": {"format": 99999999999999999999}}"#,
            #"{"pinkeeper": {"format": null}}"#, #"{"pinkeeper": {}}"#, #"{"pinkeeper": [2]}"#, #"{"pinkeeper": 2}"#, #"{}"#,
            #"[{"pinkeeper": {"format": 2}}]"#, #"{"pinkeeper": {"format": 2}"#, #"{"pinkeeper": {"format": 2}} x"#, "",
            "not json", #"{"pinkeeper": {"format": 9223372036854775807}}"#, #" {"pinkeeper" : {"format" : 3 } } "#,
        ])
    func declaredFormat(_ text: String) {
        let data = Data(text.utf8)
        let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
        let expected = (object?["pinkeeper"] as? [String: Any])?["format"] as? Int
        #expect(CacheDirectory.declaredFormat(data) == expected)
    }
}
