import Glibc

/// The one spelling of a host (docs/protocol.md, "H in one spelling"): every reader gives the
/// host a client hands over the same form before anything is looked up, so that another
/// spelling of the same address or name (`0:0:0:0:0:0:0:1`, `API.Example.com.`) can never be
/// judged as a name the store does not list. What cannot be put in one form is refused.
public enum HostName {
    /// The host's one form: an IP literal in its canonical text (IPv6 per RFC 5952, IPv4-mapped
    /// as `::ffff:a.b.c.d`), or a DNS name without its trailing dot, ASCII letters in lower case
    /// and each label holding other characters as its Punycode A-label. nil: refused (empty,
    /// zone ids, leading-zero or short IPv4, ports, empty labels, dots IDNA would map).
    public static func canonical(_ name: String) -> String? {
        guard !name.isEmpty else { return nil }
        if name.hasPrefix("[") {
            guard name.hasSuffix("]"), name.count >= 2 else { return nil }
            return IPv6Literal.canonical(String(name.dropFirst().dropLast()))
        }
        if name.contains(":") { return IPv6Literal.canonical(name) }
        if looksLikeIPv4(name) { return IPv4Literal.parse(Substring(name)).map(IPv4Literal.text) }
        return DNSName.canonical(name)
    }

    /// An IPv4 or IPv6 literal, as `inet_pton` reads it: verified against the certificate's IP
    /// addresses, and never sent as SNI.
    public static func isIPAddress(_ text: String) -> Bool {
        var v4 = in_addr(), v6 = in6_addr()
        return inet_pton(AF_INET, text, &v4) == 1 || inet_pton(AF_INET6, text, &v6) == 1
    }

    /// Whether a name without `:` must be read as an IPv4 literal: its last label (one trailing
    /// dot dropped) is all ASCII digits or starts with `0x`, or it holds only digits and dots.
    /// Such a name is never a DNS name, whatever a resolver would make of it.
    private static func looksLikeIPv4(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        if bytes.allSatisfy({ isDigit($0) || $0 == UInt8(ascii: ".") }) { return true }
        let trimmed = bytes.last == UInt8(ascii: ".") ? bytes.dropLast() : bytes[...]
        let lastLabel = trimmed.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false).last ?? []
        if !lastLabel.isEmpty && lastLabel.allSatisfy(isDigit) { return true }
        return lastLabel.count >= 2 && lastLabel.first == UInt8(ascii: "0")
            && (lastLabel.dropFirst().first == UInt8(ascii: "x") || lastLabel.dropFirst().first == UInt8(ascii: "X"))
    }

    static func isDigit(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }
}

/// Dotted-quad IPv4, the only IPv4 spelling that has one form: four decimal parts, 0–255, no
/// leading zero (which some resolvers read as octal), no trailing dot.
enum IPv4Literal {
    static func parse(_ text: Substring) -> [UInt8]? {
        let parts = text.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard parts.count == 4 else { return nil }
        var octets: [UInt8] = []
        for part in parts {
            guard (1...3).contains(part.count), part.allSatisfy(HostName.isDigit) else { return nil }
            guard part.count == 1 || part.first != UInt8(ascii: "0") else { return nil }
            let value = part.reduce(0) { $0 * 10 + Int($1 - 0x30) }
            guard value <= 255 else { return nil }
            octets.append(UInt8(value))
        }
        return octets
    }

    static func text(_ octets: [UInt8]) -> String {
        octets.map { String($0) }.joined(separator: ".")
    }
}

/// An IPv6 literal as `inet_pton(AF_INET6)` accepts it (parsed here, so that every reader and
/// every libc agree), written as RFC 5952 says.
enum IPv6Literal {
    static func canonical(_ text: String) -> String? {
        guard !text.contains("%"), let groups = parse(text) else { return nil }
        return format(groups)
    }

    /// The eight 16-bit groups, or nil when `text` is not an IPv6 literal.
    static func parse(_ text: String) -> [UInt16]? {
        guard let gap = text.firstRange(of: "::") else {
            guard let all = groups(text[...], mayEndDotted: true), all.count == 8 else { return nil }
            return all
        }
        let rest = text[gap.upperBound...]
        guard !rest.contains("::"), let head = groups(text[..<gap.lowerBound], mayEndDotted: false),
            let tail = groups(rest, mayEndDotted: true), head.count + tail.count <= 7
        else { return nil }
        return head + [UInt16](repeating: 0, count: 8 - head.count - tail.count) + tail
    }

    /// The groups of one side of `::` (empty text: none); the last may be a dotted IPv4 address.
    private static func groups(_ text: Substring, mayEndDotted: Bool) -> [UInt16]? {
        guard !text.isEmpty else { return [] }
        let pieces = text.split(separator: ":", omittingEmptySubsequences: false)
        var groups: [UInt16] = []
        for (index, piece) in pieces.enumerated() {
            if index == pieces.count - 1 && mayEndDotted && piece.contains(".") {
                guard let octets = IPv4Literal.parse(piece) else { return nil }
                groups.append(UInt16(octets[0]) << 8 | UInt16(octets[1]))
                groups.append(UInt16(octets[2]) << 8 | UInt16(octets[3]))
                continue
            }
            guard (1...4).contains(piece.utf8.count), piece.utf8.allSatisfy(isHexDigit),
                let value = UInt16(piece, radix: 16)
            else { return nil }
            groups.append(value)
        }
        return groups.count <= 8 ? groups : nil
    }

    private static func isHexDigit(_ byte: UInt8) -> Bool {
        HostName.isDigit(byte) || (byte >= 0x41 && byte <= 0x46) || (byte >= 0x61 && byte <= 0x66)
    }

    /// RFC 5952: lower-case hex without leading zeros, the longest run of two or more zero
    /// groups (the first of equal runs) as `::`; `::ffff:a.b.c.d` for an IPv4-mapped address.
    static func format(_ groups: [UInt16]) -> String {
        if groups[0..<5].allSatisfy({ $0 == 0 }) && groups[5] == 0xFFFF {
            let octets = [groups[6] >> 8, groups[6] & 0xFF, groups[7] >> 8, groups[7] & 0xFF].map { UInt8($0) }
            return "::ffff:" + IPv4Literal.text(octets)
        }
        var best = 0..<0
        var index = 0
        while index < 8 {
            guard groups[index] == 0 else {
                index += 1
                continue
            }
            var end = index
            while end < 8 && groups[end] == 0 { end += 1 }
            if end - index >= 2 && end - index > best.count { best = index..<end }
            index = end
        }
        func hex(_ range: Range<Int>) -> String { groups[range].map { String($0, radix: 16) }.joined(separator: ":") }
        guard !best.isEmpty else { return hex(0..<8) }
        return hex(0..<best.lowerBound) + "::" + hex(best.upperBound..<8)
    }
}

/// A DNS name's one form: no IDNA mapping or normalisation, only what every reader can do the
/// same way (ASCII lower case, Punycode of a label as written).
enum DNSName {
    /// Dots IDNA maps to `.`: a reader that mapped them would see other labels than one that does not.
    private static let foreignDots: Set<Unicode.Scalar> = ["\u{3002}", "\u{FF0E}", "\u{FF61}"]

    static func canonical(_ name: String) -> String? {
        guard !name.unicodeScalars.contains(where: foreignDots.contains) else { return nil }
        var scalars = Array(name.unicodeScalars)
        if scalars.last == "." { scalars.removeLast() }
        guard !scalars.isEmpty else { return nil }
        var labels: [String] = []
        for label in scalars.split(separator: ".", omittingEmptySubsequences: false) {
            guard !label.isEmpty else { return nil }
            let lowered = label.map { $0.isASCII ? Unicode.Scalar(UInt8(PinName.fold(UInt8($0.value)))) : $0 }
            if lowered.allSatisfy(\.isASCII) {
                labels.append(String(String.UnicodeScalarView(lowered)))
            } else {
                guard let encoded = Punycode.encode(lowered) else { return nil }
                labels.append("xn--" + encoded)
            }
        }
        return labels.joined(separator: ".")
    }
}
