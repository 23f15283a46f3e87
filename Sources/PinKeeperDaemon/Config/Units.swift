/// Durations ("90s", "15m", "36h", "7d", "2w" or integer seconds) and sizes ("512KiB", "1MiB" or
/// integer bytes) as written in the configuration.
enum Units {
    static let durations: [(String, Int64)] = [("w", 604_800), ("d", 86_400), ("h", 3_600), ("m", 60), ("s", 1)]
    static let sizes: [(String, Int64)] = [("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10), ("B", 1)]

    static func seconds(_ text: String) -> Int64? { scaled(text, durations) }

    static func bytes(_ text: String) -> Int64? { scaled(text, sizes) }

    /// A well-formed number too large for Int64 (digits or product) reads as `Int64.max`, which
    /// every key's range refuses with its bounds, rather than as a malformed value.
    private static func scaled(_ text: String, _ units: [(String, Int64)]) -> Int64? {
        for (suffix, factor) in units where text.hasSuffix(suffix) {
            let number = text.dropLast(suffix.count)
            guard !number.isEmpty, number.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
            return (Int64(number) ?? .max).saturatingMultiplied(by: factor)
        }
        return nil
    }

    /// A bound as the configuration would write it, in the largest unit that divides it: "365d", "1GiB".
    static func written(seconds: Int64) -> String { written(seconds, durations) }

    static func written(bytes: Int64) -> String { written(bytes, sizes) }

    private static func written(_ value: Int64, _ units: [(String, Int64)]) -> String {
        let (suffix, factor) = units.first { value != 0 && value % $0.1 == 0 } ?? units[units.count - 1]
        return "\(value / factor)\(suffix)"
    }

    /// "1h 30m" style rendering for messages and status lines.
    static func describe(seconds: Int64) -> String {
        if seconds <= 0 { return "now" }
        let parts: [(Int64, String)] = [(86_400, "d"), (3_600, "h"), (60, "m"), (1, "s")]
        var rest = seconds
        var out: [String] = []
        for (size, unit) in parts where rest >= size && out.count < 2 {
            out.append("\(rest / size)\(unit)")
            rest %= size
        }
        return out.joined(separator: " ")
    }
}
