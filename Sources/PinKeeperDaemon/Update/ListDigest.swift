public import PinKeeper

/// What a pinning service served, reduced to a digest that two hosts served the same list agree
/// on, so that a fleet can notice one host being served another (docs/monitoring.md, "The list
/// digest", defines the bytes; `Tests/Fixtures/list-digest.py` is a second implementation).
///
/// SHA-256, in lower-case hex, over:
///
///     pinkeeper-list-digest-v1 LF
///     one line per distinct entry, sorted as bytes:
///         "pin " <UTF-8 length of name> " " <name> " " <fingerprint, hex> " " <expires> " " <depth> LF
///     if a domainsConfig is covered:
///         "domains-unlisted " ("true" | "false") LF
///         one line per distinct name, its first entry only, sorted as bytes:
///             "domain " <UTF-8 length> " " <name, ASCII letters lower-cased> " " ("true" | "false") LF
///
/// Numbers are decimal. The length prefix keeps any name, spaces and line feeds included, from
/// being read as another line. Order, duplicates and the response's other members (MUS's
/// `timestamp`) leave the digest as it is; domains are reduced to what readers decide by (the
/// first entry for a name counts, names compared with ASCII letters folded).
///
/// The pin lines are never all made: entries are sorted in the order their lines would sort in
/// (`DigestEntry.lineOrder`) and each line is hashed as it is written (a 100,000-entry list's
/// lines are about 12 MB).
public enum ListDigest {
    static let header = "pinkeeper-list-digest-v1\n"

    /// `pins` as served (expired ones too: the digest must not depend on when a host fetched);
    /// `domainsConfig` only when its signature covered it (challenge mode).
    public static func of(pins: [Pin], domainsConfig: DomainsConfig?) -> String {
        of(PinEntries(pins: pins), domainsConfig: domainsConfig)
    }

    static func of(_ entries: some DigestEntries, domainsConfig: DomainsConfig?) -> String {
        var hash = SHA256Stream()
        write(entries, domainsConfig: domainsConfig) { hash.update($0) }
        return lowerHex(hash.finish())
    }

    static func canonicalBytes(pins: [Pin], domainsConfig: DomainsConfig?) -> [UInt8] {
        var bytes: [UInt8] = []
        write(PinEntries(pins: pins), domainsConfig: domainsConfig) { bytes += $0 }
        return bytes
    }

    /// The canonical bytes, a line at a time.
    private static func write(
        _ entries: some DigestEntries, domainsConfig: DomainsConfig?, _ out: (UnsafeRawBufferPointer) -> Void
    ) {
        var line: [UInt8] = Array(header.utf8)
        line.withUnsafeBytes(out)
        var order = Array(0..<entries.count)
        order.sort { a, b in entries.with(a) { x in entries.with(b) { y in DigestEntry.lineOrder(x, y) < 0 } } }
        for (position, index) in order.enumerated() {
            let duplicate =
                position > 0 && entries.with(order[position - 1]) { x in entries.with(index) { y in DigestEntry.lineOrder(x, y) == 0 } }
            guard !duplicate else { continue }
            line.removeAll(keepingCapacity: true)
            entries.with(index) { $0.writeLine(into: &line) }
            line.withUnsafeBytes(out)
        }
        guard let domainsConfig else { return }
        Array("domains-unlisted \(domainsConfig.sslPinningRequiredForUnlisted)\n".utf8).withUnsafeBytes(out)
        var decided: [[UInt8]: Bool] = [:]
        for domain in domainsConfig.domains {
            let folded = domain.name.utf8.map { $0 >= 0x41 && $0 <= 0x5A ? $0 | 0x20 : $0 }
            if decided[folded] == nil { decided[folded] = domain.sslPinningRequired }
        }
        let domains = decided.map { Array("domain \($0.key.count) ".utf8) + $0.key + Array(" \($0.value)\n".utf8) }
        for domain in domains.sorted(by: { $0.lexicographicallyPrecedes($1) }) { domain.withUnsafeBytes(out) }
    }

    /// 64 lower-case hex digits: what a state file may hand to `status` and the metrics (an
    /// edited file must not put arbitrary text into a label).
    public static func isWellFormed(_ text: String) -> Bool {
        text.utf8.count == 64 && text.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) }
    }
}

/// Entries a digest is taken of, read in place.
protocol DigestEntries {
    var count: Int { get }
    func with<R>(_ index: Int, _ body: (DigestEntry) -> R) -> R
}

/// One entry's fields, borrowed for the length of a call.
struct DigestEntry {
    var name: UnsafeRawBufferPointer
    var fingerprint: UnsafeRawBufferPointer
    var expires: Int64
    var depth: Int

    /// `pin <length> <name> <hex> <expires> <depth>` LF, appended.
    func writeLine(into line: inout [UInt8]) {
        line += Array("pin \(name.count) ".utf8)
        line += name
        line.append(0x20)
        let digits = Array("0123456789abcdef".utf8)
        for byte in fingerprint {
            line.append(digits[Int(byte >> 4)])
            line.append(digits[Int(byte & 0x0F)])
        }
        line += Array(" \(expires) \(depth)\n".utf8)
    }

    /// How the two entries' lines compare as bytes (< 0, 0, > 0), without writing them. Each
    /// field is followed by a byte below every byte it can end on or be continued with (a space,
    /// or LF after the depth) except inside the name, and names are compared only when their
    /// lengths, and so their length fields, are equal. So the lines compare as their fields
    /// do in turn, each field as a string of bytes in which a prefix comes first: the decimal
    /// length, the name, the fingerprint (hex digits sort as the nibbles they stand for), the
    /// decimal expiry and the decimal depth.
    static func lineOrder(_ a: DigestEntry, _ b: DigestEntry) -> Int {
        if a.name.count != b.name.count { return decimalOrder(Int64(a.name.count), Int64(b.name.count)) }
        var order = RawBytes.order(a.name, b.name)
        if order != 0 { return order }
        order = RawBytes.order(a.fingerprint, b.fingerprint)
        if order != 0 { return order }
        if a.expires != b.expires { return decimalOrder(a.expires, b.expires) }
        if a.depth != b.depth { return decimalOrder(Int64(a.depth), Int64(b.depth)) }
        return 0
    }

    /// Two numbers' decimal spellings compared as bytes ("-" before the digits, "10" before "9").
    private static func decimalOrder(_ a: Int64, _ b: Int64) -> Int {
        Array(String(a).utf8).withUnsafeBytes { x in Array(String(b).utf8).withUnsafeBytes { y in RawBytes.order(x, y) } }
    }
}

/// Pins as the digest reads them.
struct PinEntries: DigestEntries {
    var pins: [Pin]
    var count: Int { pins.count }

    func with<R>(_ index: Int, _ body: (DigestEntry) -> R) -> R {
        let pin = pins[index]
        return RawBytes.withUTF8(pin.name) { name in
            pin.digest.withUnsafeBytes { fingerprint in
                body(DigestEntry(name: name, fingerprint: fingerprint, expires: pin.expires, depth: pin.depth))
            }
        }
    }
}
