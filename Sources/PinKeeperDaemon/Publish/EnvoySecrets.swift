public import PinKeeper

/// What Envoy's file-based SDS should hold for one store: for each host name, one
/// `DiscoveryResponse` with one `Secret` whose `verify_certificate_hash` lists the SHA-256 of
/// the name's live leaf pins. Pure: `EnvoySecretWriter` puts the files in place.
///
/// Envoy compares the leaf alone, with no expiry, no depth, no `domainsConfig` and no expected
/// names, and skips the check when the list is empty. Every name whose reader verdict Envoy
/// could not reproduce therefore gets a hash no certificate has (fail closed), with a warning.
public struct EnvoySecrets: Sendable, Equatable {
    /// File name (`<name>.yaml`) → contents.
    public var files: [String: String] = [:]
    /// Why a file's name fails closed, by file name: logged when that file is written.
    public var warnings: [String: String] = [:]
    /// Names left out because they cannot be file names: logged once per publish.
    public var skipped: [String] = []
    /// When the hash lists change next without an update: the second after a live pin's expiry.
    public var nextChange: Int64?

    /// SHA-256 of nothing any CA signs: 32 zero bytes. A list holding only it matches no certificate.
    static let neverMatches = String(repeating: "0", count: 64)

    /// No names: every file already in the store's directory is made to match nothing.
    public init() {}

    public init(store: StoreConfig, cache: CacheFile?, fallbackPins: [Pin], now: Int64) {
        let pins = (cache?.list.pins ?? []) + fallbackPins
        let domains = cache?.list.domainsConfig
        for name in Self.names(pins: pins, domains: domains) {
            guard EnvoySecretName.isPathSafe(name) else {
                skipped.append(name)
                continue
            }
            let own = pins.filter { PinName.same($0.name, name) && !$0.isExpired(at: now) }
            var hashes = own.filter { $0.depth == 0 }.map { lowerHex($0.fingerprint) }
            if let reason = Self.failsClosed(name, own: own, store: store, domains: domains) {
                warnings[name + ".yaml"] = reason
                hashes = []
            }
            files[name + ".yaml"] = Self.render(name: name, hashes: hashes.isEmpty ? [Self.neverMatches] : hashes)
            for pin in own { nextChange = min(nextChange ?? Int64.max, pin.expires.saturatingAdding(1)) }
        }
    }

    /// Every name the store's pins or `domainsConfig` mention, as the list writes it, once.
    static func names(pins: [Pin], domains: DomainsConfig?) -> [String] {
        var seen = Set<String>(), names: [String] = []
        for name in pins.map(\.name) + (domains?.domains.map(\.name) ?? []) where seen.insert(name).inserted {
            names.append(name)
        }
        return names
    }

    /// Why Envoy's check would not be the readers' answer for this name, or nil.
    static func failsClosed(_ name: String, own: [Pin], store: StoreConfig, domains: DomainsConfig?) -> String? {
        if let expected = store.expectedCommonNames, !expected.contains(where: { PinName.same($0, name) }) {
            return "it is not among the store's expected_common_names, which Envoy cannot check"
        }
        if let domains, !Self.requiresPinning(name, domains) {
            return "domainsConfig exempts it from pinning, which Envoy cannot express"
        }
        if own.contains(where: { $0.depth != 0 }), !own.contains(where: { $0.depth == 0 }) {
            return "it has only pins at depth 1 or more, and Envoy compares the leaf alone"
        }
        return nil
    }

    /// The reader's rule: a listed name's own flag (its first entry), else the unlisted one.
    static func requiresPinning(_ name: String, _ domains: DomainsConfig) -> Bool {
        domains.domains.first { PinName.same($0.name, name) }?.sslPinningRequired ?? domains.sslPinningRequiredForUnlisted
    }

    static func render(name: String, hashes: [String]) -> String {
        var text = """
            # Written by pinkeeper; replaced whole on every change. Do not edit.
            resources:
            - "@type": type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.Secret
              name: "\(name)"
              validation_context:
                verify_certificate_hash:

            """
        for hash in hashes { text += "    - \"\(hash)\"\n" }
        return text
    }

}

/// A name that may become a file name in the SDS directory: a DNS name or an IP literal. A
/// signed list can still carry `../x`, `*.example.com` or a control character.
public enum EnvoySecretName {
    public static func isPathSafe(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        guard (1...253).contains(bytes.count), bytes.first != UInt8(ascii: "."), bytes.last != UInt8(ascii: ".") else { return false }
        if bytes.contains(UInt8(ascii: ":")) { return isIPv6(bytes) }
        return name.split(separator: ".", omittingEmptySubsequences: false).allSatisfy(isLabel)
    }

    private static func isLabel(_ label: Substring) -> Bool {
        let bytes = Array(label.utf8)
        guard (1...63).contains(bytes.count), bytes.first != UInt8(ascii: "-"), bytes.last != UInt8(ascii: "-") else { return false }
        return bytes.allSatisfy { isAlphanumeric($0) || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "_") }
    }

    private static func isIPv6(_ bytes: [UInt8]) -> Bool {
        bytes.count <= 45 && bytes.allSatisfy { isHex($0) || $0 == UInt8(ascii: ":") || $0 == UInt8(ascii: ".") }
    }

    private static func isAlphanumeric(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte | 0x20) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
    }

    private static func isHex(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte | 0x20)
    }
}
