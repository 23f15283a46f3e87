@testable import PinKeeperDaemon

/// A read document in the canonical form Tests/Fixtures/toml-canonical.py prints for Python's
/// tomllib: JSON with tagged scalars, keys sorted, ASCII only, no spaces — byte for byte what
/// Python's `json.dumps(…, ensure_ascii=True, sort_keys=True, separators=(",", ":"))` writes.
enum TOMLCanonical {
    static func json(_ table: TOMLTable) -> String {
        var out = ""
        write(.table(table), to: &out)
        return out
    }

    private static func write(_ value: TOMLValue, to out: inout String) {
        switch value {
        case .table(let table):
            out += "{"
            for (index, key) in table.keys.enumerated() {
                if index > 0 { out += "," }
                quote(key, to: &out)
                out += ":"
                write(table[key]!, to: &out)
            }
            out += "}"
        case .array(let elements):
            out += "["
            for (index, element) in elements.enumerated() {
                if index > 0 { out += "," }
                write(element, to: &out)
            }
            out += "]"
        case .string(let text): tagged("string", text, to: &out)
        case .integer(let number): tagged("integer", String(number), to: &out)
        case .boolean(let flag): tagged("bool", flag ? "true" : "false", to: &out)
        case .float(let number): tagged("float", floatText(number), to: &out)
        case .dateTime(let date): tagged(dateKind(date.kind), dateText(date), to: &out)
        }
    }

    private static func tagged(_ type: String, _ value: String, to out: inout String) {
        out += "{\"type\":"
        quote(type, to: &out)
        out += ",\"value\":"
        quote(value, to: &out)
        out += "}"
    }

    private static func floatText(_ number: Double) -> String {
        if number.isNaN { return "nan" }
        if number.isInfinite { return number > 0 ? "+inf" : "-inf" }
        let hex = String(number.bitPattern, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }

    private static func dateKind(_ kind: TOMLDateTime.Kind) -> String {
        switch kind {
        case .offsetDateTime: return "datetime"
        case .localDateTime: return "datetime-local"
        case .localDate: return "date-local"
        case .localTime: return "time-local"
        }
    }

    /// The value as Python's datetime keeps it: fraction cut to 6 digits, offset as ±HH:MM.
    private static func dateText(_ date: TOMLDateTime) -> String {
        var text = Substring(date.text)
        var out = ""
        if date.kind != .localTime {
            out += text.prefix(10)
            text = text.dropFirst(10)
            guard !text.isEmpty else { return out }
            out += "T"
            text = text.dropFirst()
        }
        out += text.prefix(8)
        text = text.dropFirst(8)
        var fraction = ""
        if text.first == "." {
            text = text.dropFirst()
            fraction = String(text.prefix { $0.isASCII && $0.isNumber })
            text = text.dropFirst(fraction.count)
        }
        out += "." + String((fraction + "000000").prefix(6))
        if date.kind == .offsetDateTime {
            if text == "Z" || text == "z" {
                out += "+00:00"
            } else {
                let sign = text.first!, rest = text.dropFirst()
                out += (rest == "00:00" ? "+" : String(sign)) + rest
            }
        }
        return out
    }

    private static func quote(_ text: String, to out: inout String) {
        out += "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case "\u{08}": out += "\\b"
            case "\u{0C}": out += "\\f"
            case " "..."~": out.unicodeScalars.append(scalar)
            default:
                if scalar.value < 0x10000 {
                    out += unit(scalar.value)
                } else {
                    let value = scalar.value - 0x10000
                    out += unit(0xD800 + (value >> 10)) + unit(0xDC00 + (value & 0x3FF))
                }
            }
        }
        out += "\""
    }

    private static func unit(_ value: UInt32) -> String {
        let hex = String(value, radix: 16)
        return "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
    }
}
