/// One line of the daemon's stderr read as a logfmt reader reads it (go-logfmt's rules: a bare
/// value runs to the next space and is taken as written; a quoted one unescapes `\"`, `\\`, `\n`,
/// `\r`, `\t` and `\uXXXX`). Nil for a line that is not logfmt, or a quoted value with any other escape.
struct LogfmtLine {
    var pairs: [(key: String, value: String)] = []

    subscript(key: String) -> String? { pairs.first { $0.key == key }?.value }

    init?<Text: StringProtocol>(_ line: Text) {
        var scalars = Substring(line).unicodeScalars[...]
        while !scalars.isEmpty {
            guard scalars.first != " " else {
                scalars.removeFirst()
                continue
            }
            let key = scalars.prefix { $0 != "=" && $0 != " " && $0 != "\"" && $0.value > 0x20 }
            guard !key.isEmpty, scalars.dropFirst(key.count).first == "=" else { return nil }
            scalars = scalars.dropFirst(key.count + 1)
            var value = ""
            if scalars.first == "\"" {
                scalars.removeFirst()
                var closed = false
                while let scalar = scalars.popFirst() {
                    if scalar == "\"" {
                        closed = true
                        break
                    }
                    guard scalar == "\\" else {
                        value.unicodeScalars.append(scalar)
                        continue
                    }
                    switch scalars.popFirst() {
                    case "\""?: value += "\""
                    case "\\"?: value += "\\"
                    case "n"?: value += "\n"
                    case "r"?: value += "\r"
                    case "t"?: value += "\t"
                    case "u"?:
                        let hex = String(String.UnicodeScalarView(scalars.prefix(4)))
                        guard hex.count == 4, let code = UInt32(hex, radix: 16), let decoded = Unicode.Scalar(code) else { return nil }
                        value.unicodeScalars.append(decoded)
                        scalars = scalars.dropFirst(4)
                    default: return nil
                    }
                }
                guard closed, scalars.isEmpty || scalars.first == " " else { return nil }
            } else {
                let bare = scalars.prefix { $0 != " " }
                guard !bare.contains("\"") && !bare.contains("=") else { return nil }
                value = String(String.UnicodeScalarView(bare))
                scalars = scalars.dropFirst(bare.count)
            }
            pairs.append((String(String.UnicodeScalarView(key)), value))
        }
        guard !pairs.isEmpty else { return nil }
    }

    /// Every line of `stderr` that is a log line (has `time`, `level` and `msg`).
    static func all(_ stderr: String) -> [LogfmtLine] {
        stderr.split(separator: "\n").compactMap(LogfmtLine.init).filter { $0["time"] != nil && $0["level"] != nil && $0["msg"] != nil }
    }

    /// Whether this is an event at `level` whose message starts with `message`.
    func `is`(_ level: String, _ message: String) -> Bool { self["level"] == level && self["msg"]?.hasPrefix(message) == true }
}

extension StringProtocol {
    /// This line is a log line at `level` whose message starts with `message`.
    func isLog(_ level: String, _ message: String) -> Bool { LogfmtLine(self)?.is(level, message) == true }
}
