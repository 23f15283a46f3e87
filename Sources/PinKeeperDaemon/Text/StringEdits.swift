/// The few string edits the daemon needs, without Foundation (`import Foundation` links
/// Foundation, ICU and CoreFoundation into the static binary: docs/performance.md). They work on Unicode
/// scalars, not on `Character`s: a needle followed by a combining mark in the text is still
/// found, which matters when the needle is a secret to scrub or a quote to escape.
extension StringProtocol {
    /// The first occurrence of `needle`'s scalars, or nil; an empty needle is never found.
    func scalarRange(of needle: String) -> Range<Index>? {
        let scalars = unicodeScalars
        let wanted = Array(needle.unicodeScalars)
        guard let first = wanted.first else { return nil }
        var start = scalars.startIndex
        while let found = scalars[start...].firstIndex(of: first) {
            var end = found
            var matched = true
            for scalar in wanted {
                guard end < scalars.endIndex, scalars[end] == scalar else { matched = false; break }
                end = scalars.index(after: end)
            }
            if matched { return found..<end }
            start = scalars.index(after: found)
        }
        return nil
    }

    /// Every non-overlapping occurrence of `needle` replaced by `replacement`, left to right.
    func replacingEvery(_ needle: String, with replacement: String) -> String {
        var out = ""
        var rest = self[...]
        while let found = rest.scalarRange(of: needle) {
            out += rest[..<found.lowerBound]
            out += replacement
            rest = rest[found.upperBound...]
        }
        return out + rest
    }

    /// Without leading and trailing blanks: tab, the spaces of Unicode category Zs and U+200B
    /// (zero width space, once Zs), and with `newlines` also U+000A–U+000D, U+0085, U+2028 and
    /// U+2029: the sets of Foundation's `.whitespaces` and `.whitespacesAndNewlines`.
    func trimmingBlanks(newlines: Bool = false) -> String {
        func blank(_ scalar: Unicode.Scalar) -> Bool {
            if scalar == "\t" || scalar == "\u{200B}" || scalar.properties.generalCategory == .spaceSeparator { return true }
            guard newlines else { return false }
            switch scalar.value {
            case 0x0A...0x0D, 0x85, 0x2028, 0x2029: return true
            default: return false
            }
        }
        let scalars = unicodeScalars
        guard let first = scalars.firstIndex(where: { !blank($0) }) else { return "" }
        let last = scalars.lastIndex(where: { !blank($0) })!
        return String(self[first..<scalars.index(after: last)])
    }

    /// Followed by spaces up to `width` characters, for a table column; never shortened.
    public func padded(to width: Int) -> String {
        String(self) + String(repeating: " ", count: Swift.max(0, width - count))
    }
}
