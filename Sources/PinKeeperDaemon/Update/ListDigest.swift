import PinKeeper

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
public enum ListDigest {
    static let header = "pinkeeper-list-digest-v1\n"

    /// `pins` as served (expired ones too: the digest must not depend on when a host fetched);
    /// `domainsConfig` only when its signature covered it (challenge mode).
    public static func of(pins: [Pin], domainsConfig: DomainsConfig?) -> String {
        lowerHex(SHA256.digest(canonicalBytes(pins: pins, domainsConfig: domainsConfig)))
    }

    static func canonicalBytes(pins: [Pin], domainsConfig: DomainsConfig?) -> [UInt8] {
        var bytes = Array(header.utf8)
        let entries = Set(
            pins.map { pin in
                line("pin", pin.name.utf8, [lowerHex(pin.fingerprint), String(pin.expires), String(pin.depth)])
            })
        for entry in entries.sorted(by: { $0.lexicographicallyPrecedes($1) }) { bytes += entry }
        guard let domainsConfig else { return bytes }
        bytes += Array("domains-unlisted \(domainsConfig.sslPinningRequiredForUnlisted)\n".utf8)
        var decided: [[UInt8]: Bool] = [:]
        for domain in domainsConfig.domains {
            let folded = domain.name.utf8.map { $0 >= 0x41 && $0 <= 0x5A ? $0 | 0x20 : $0 }
            if decided[folded] == nil { decided[folded] = domain.sslPinningRequired }
        }
        let domains = decided.map { line("domain", $0.key, [String($0.value)]) }
        for domain in domains.sorted(by: { $0.lexicographicallyPrecedes($1) }) { bytes += domain }
        return bytes
    }

    /// `<kind> <length> <name> <fields…>` LF.
    private static func line<Name: Collection<UInt8>>(_ kind: String, _ name: Name, _ fields: [String]) -> [UInt8] {
        Array("\(kind) \(name.count) ".utf8) + Array(name) + Array(fields.map { " \($0)" }.joined().utf8) + [0x0A]
    }

    /// 64 lower-case hex digits: what a state file may hand to `status` and the metrics (an
    /// edited file must not put arbitrary text into a label).
    public static func isWellFormed(_ text: String) -> Bool {
        text.utf8.count == 64 && text.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) }
    }
}
