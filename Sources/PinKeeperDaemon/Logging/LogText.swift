/// Makes text from outside (entry names, server messages, paths) safe to put in one log line,
/// on the console and in the journal alike: a hostile value cannot end the line, start a
/// forged one, hide text with a NUL or drive the terminal with escape sequences.
public enum LogText {
    /// `value` with every control character written as an escape: `\n`, `\r`, `\t`, and
    /// `\u{hex}` for the rest of C0, DEL, C1, the Unicode line and paragraph separators and the
    /// bidirectional overrides. A backslash becomes `\\`, so an escape in the output always
    /// means the character was there, never that the value spelled it out.
    public static func escaped(_ value: String) -> String {
        guard value.unicodeScalars.contains(where: needsEscape) else { return value }
        var out = ""
        out.reserveCapacity(value.utf8.count + 8)
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where needsEscape(scalar): out += "\\u{" + String(scalar.value, radix: 16) + "}"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// `escaped(value)` as one `key=value` token: in double quotes, with `\"` for a quote, when
    /// it is empty or holds a space, `"` or `=`. Backslashes are already doubled, so `\"` is unambiguous.
    public static func quoted(_ value: String) -> String {
        let text = escaped(value)
        guard needsQuotes(text) else { return text }
        return "\"" + text.replacingEvery("\"", with: "\\\"") + "\""
    }

    /// Whether escaped text must be quoted to stay one `key=value` token: it is empty or holds a
    /// space, `"` or `=`.
    static func needsQuotes(_ escaped: String) -> Bool {
        escaped.isEmpty || escaped.unicodeScalars.contains { $0 == " " || $0 == "\"" || $0 == "=" }
    }

    private static func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x5C, 0x7F...0x9F: true  // C0, backslash, DEL, C1
        case 0x2028, 0x2029: true  // line and paragraph separators
        case 0x061C, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069: true  // bidi marks and overrides
        default: false
        }
    }
}
