/// Durations ("90s", "15m", "36h", "7d", "2w" or integer seconds) and sizes ("512KiB", "1MiB" or
/// integer bytes) as written in the configuration.
enum Units {
    static func seconds(_ text: String) -> Int64? {
        let units: [(String, Int64)] = [("s", 1), ("m", 60), ("h", 3_600), ("d", 86_400), ("w", 604_800)]
        return scaled(text, units)
    }

    static func bytes(_ text: String) -> Int64? {
        let units: [(String, Int64)] = [("KiB", 1 << 10), ("MiB", 1 << 20), ("GiB", 1 << 30), ("B", 1)]
        return scaled(text, units)
    }

    private static func scaled(_ text: String, _ units: [(String, Int64)]) -> Int64? {
        for (suffix, factor) in units where text.hasSuffix(suffix) {
            let number = text.dropLast(suffix.count)
            guard !number.isEmpty, number.allSatisfy(\.isASCII), number.allSatisfy(\.isNumber),
                  let value = Int64(number) else { return nil }
            let (product, overflow) = value.multipliedReportingOverflow(by: factor)
            return overflow ? nil : product
        }
        return nil
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
