import Foundation
import TestSupport

/// Random TOML documents for the differential test: built from the grammar (mostly valid, with
/// table headers and dotted keys that sometimes redefine each other), and byte-level mutations
/// of valid documents. Seeded, so that a failure can be reproduced.
struct TOMLGenerator {
    private var random: SplitMix64

    init(seed: UInt64) { random = SplitMix64(seed: seed) }

    mutating func next() -> UInt64 { random.next() }

    mutating func below(_ bound: Int) -> Int { Int(next() % UInt64(bound)) }

    mutating func pick<T>(_ choices: [T]) -> T { choices[below(choices.count)] }

    mutating func chance(_ percent: Int) -> Bool { below(100) < percent }

    // MARK: Documents from the grammar

    mutating func document() -> String {
        var lines: [String] = []
        for _ in 0..<(1 + below(8)) {
            switch below(10) {
            case 0...4: lines.append("\(key()) \(pick(["=", " = ", "\t=\t"])) \(value(depth: 0))\(comment())")
            case 5...6: lines.append("\(pick(["[", "[ "]))\(key())\(pick(["]", " ]"]))\(comment())")
            case 7: lines.append("[[\(key())]]\(comment())")
            case 8: lines.append(pick(["", "# note", "   ", "\t# x"]))
            default: lines.append("\(key()) = \(value(depth: 0))")
            }
        }
        return lines.joined(separator: pick(["\n", "\n", "\r\n", "\n\n"])) + pick(["", "\n"])
    }

    private mutating func comment() -> String { chance(20) ? pick([" # c", "# ✓", " #"]) : "" }

    mutating func key() -> String {
        (0..<(1 + (chance(30) ? below(3) : 0))).map { _ in keyPart() }.joined(separator: pick([".", ".", " . "]))
    }

    private mutating func keyPart() -> String {
        switch below(6) {
        case 0: return "\"\(pick(["a", "b", "", "a b", "é", "\\u0061", "\\t"]))\""
        case 1: return "'\(pick(["a", "b", "", "c.d", "\\"]))'"
        default: return pick(["a", "b", "c", "x", "1", "a-b", "_", "true", "inf"])
        }
    }

    mutating func value(depth: Int) -> String {
        switch below(depth > 2 ? 9 : 11) {
        case 0: return integer()
        case 1: return float()
        case 2: return pick(["true", "false"])
        case 3, 4: return string()
        case 5, 6: return dateTime()
        case 7: return pick(["inf", "-inf", "+nan", "nan"])
        case 8: return integer()
        case 9:
            let elements = (0..<below(4)).map { _ in value(depth: depth + 1) }
            let separator = pick([", ", ",", ",\n  ", " ,# c\n"])
            return "[" + pick(["", " ", "\n"]) + elements.joined(separator: separator) + (chance(30) && !elements.isEmpty ? "," : "") + "]"
        default:
            let pairs = (0..<below(4)).map { _ in "\(key()) = \(value(depth: depth + 1))" }
            return "{" + (pairs.isEmpty ? pick(["", " "]) : " " + pairs.joined(separator: ", ") + " ") + "}"
        }
    }

    private mutating func digits(_ alphabet: String, count: Int) -> String {
        let characters = Array(alphabet)
        var text = String(pick(Array(characters.dropFirst(alphabet.count > 2 ? 1 : 0))))
        for _ in 0..<count {
            if chance(10) { text += "_" }
            text += String(pick(characters))
        }
        return text
    }

    private mutating func integer() -> String {
        switch below(8) {
        case 0: return "0x" + digits("0123456789abcdefABCDEF", count: below(16))
        case 1: return "0o" + digits("01234567", count: below(22))
        case 2: return "0b" + digits("01", count: below(64))
        case 3: return pick(["0", "+0", "-0", "9223372036854775807", "-9223372036854775808", "9223372036854775808"])
        default: return pick(["", "+", "-"]) + digits("0123456789", count: below(20))
        }
    }

    private mutating func float() -> String {
        var text = pick(["", "+", "-"]) + (chance(20) ? "0" : digits("0123456789", count: below(6)))
        if chance(70) { text += "." + digits("0123456789", count: below(8)) }
        if chance(40) { text += pick(["e", "E"]) + pick(["", "+", "-"]) + digits("0123456789", count: below(3)) }
        if !text.contains(".") && !text.lowercased().contains("e") { text += ".5" }
        return text
    }

    private mutating func string() -> String {
        let pieces = [
            "a", " ", "é", "😀", "\\n", "\\t", "\\\"", "\\\\", "\\u00e9", "\\U0001F600", "#", "\\b",
            "\\f", "\\r", "\t", "\\u0000",
        ]
        let content = (0..<below(6)).map { _ in pick(pieces) }.joined()
        let quote = pick(["", "'", "\"", "''", "\"\""])
        switch below(6) {
        case 0: return "'" + content + "'"
        case 1: return "'''" + pick(["", "\n"]) + quote + content + pick(["", "\n", "'"]) + "'''"
        case 2: return "\"\"\"" + pick(["", "\n", "\r\n"]) + quote + content + pick(["", "\\\n  ", "\n", "\""]) + "\"\"\""
        default: return "\"" + content + "\""
        }
    }

    private mutating func two(_ upTo: Int) -> String {
        let number = below(upTo)
        return (number < 10 ? "0" : "") + String(number)
    }

    private mutating func dateTime() -> String {
        let year = String(1000 + below(9000))
        let date = "\(year)-\(two(14))-\(two(33))"
        let time = "\(two(25)):\(two(61)):\(two(61))" + (chance(30) ? "." + digits("0123456789", count: below(10)) : "")
        switch below(4) {
        case 0: return date
        case 1: return time
        case 2: return date + pick(["T", "t", " "]) + time
        default: return date + pick(["T", " "]) + time + pick(["Z", "z", "+\(two(25)):\(two(61))", "-\(two(24)):\(two(60))"])
        }
    }

    // MARK: Mutations

    /// One to three byte edits: a deletion, an insertion of a byte TOML gives meaning to (or a
    /// stray control or non-UTF-8 byte), or a duplicated span.
    mutating func mutate(_ document: String) -> [UInt8] {
        var bytes = Array(document.utf8)
        let interesting = Array("[]{}=.,\"'#\n\r\t \\_-+:0123456789eExobtfTZzin".utf8) + [0x00, 0x01, 0x7F, 0xC3, 0xA9, 0xFF, 0xED]
        for _ in 0..<(1 + below(3)) {
            let position = below(bytes.count + 1)
            switch below(3) {
            case 0 where !bytes.isEmpty: bytes.remove(at: min(position, bytes.count - 1))
            case 1 where !bytes.isEmpty:
                let start = min(position, bytes.count - 1), length = 1 + below(min(4, bytes.count - start))
                bytes.insert(contentsOf: bytes[start..<(start + length)], at: start)
            default: bytes.insert(pick(interesting), at: position)
            }
        }
        return bytes
    }
}
