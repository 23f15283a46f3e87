import Foundation
import PinKeeper
@testable import PinKeeperDaemon
import TestSupport

/// One generated static list and the store it reaches: the entries the server sends (signed, or
/// not as they should be), the keys the store trusts and the pins it has already published.
/// Made from a seed, so a case that fails is made again from the label it is reported under.
struct StaticListCase: CustomStringConvertible {
    static let now: Int64 = 1_900_000_000
    /// Keys 0 and 1 may be configured; key 2 never is (a removed key).
    static let signers: [SigningKey] = (0..<3).map { _ in try! SigningKey() }
    static let removedKey = 2

    enum Signature {
        case by(Int)
        /// Key 0's valid signature over another entry (a later expiry).
        case forged
        /// A well-formed DER signature no key here made.
        case wrong
        case garbage
        case missing
        case empty
    }

    struct Entry {
        var name: String
        var fingerprint: [UInt8]
        var expires: Int64
        var depth = 0
        var signature: Signature
    }

    var label: String
    var entries: [Entry]
    var domainsConfig = false
    /// The published file's pins, in published order, each at most once.
    var cached: [Pin] = []
    var hasPublished = true
    var plannedNextUpdate = now + 3_600
    /// Indices into `signers`, in the store's order (the first is the one the file written while
    /// verifying assumes).
    var configured: [Int] = [0]
    var expectedNames: [String]?

    var description: String {
        "\(label): \(entries.count) entries, \(cached.count) cached, keys \(configured), expected names \(expectedNames ?? [])"
    }

    var store: StoreConfig {
        StoreConfig(
            id: "fast", url: "https://127.0.0.1/fast", publicKeys: configured.map { Self.signers[$0].publicKey }, mode: .static,
            expectedCommonNames: expectedNames)
    }

    var published: CacheFile? {
        guard hasPublished || !cached.isEmpty else { return nil }
        return CacheFile(
            list: PinList(pins: cached),
            metadata: .init(
                store: "fast", source: "https://127.0.0.1/fast", updated: Self.now - 7_200, nextUpdate: plannedNextUpdate, mode: .static))
    }

    /// The list as the server sends it, every signature made now.
    func body() throws -> Data {
        let fingerprints: [[String: Any]] = entries.map { entry in
            var json: [String: Any] = [
                "name": entry.name, "fingerprint": Data(entry.fingerprint).base64EncodedString(), "expires": entry.expires,
            ]
            if entry.depth != 0 { json["depth"] = entry.depth }
            if let signature = Self.signature(entry) { json["signature"] = signature }
            return json
        }
        var list: [String: Any] = ["fingerprints": fingerprints]
        if domainsConfig { list["domainsConfig"] = ["sslPinningRequiredForUnlisted": false, "domains": [] as [Any]] }
        return try JSONSerialization.data(withJSONObject: list)
    }

    static func signature(_ entry: Entry) -> String? {
        switch entry.signature {
        case .by(let key): return signers[key].sign(name: entry.name, fingerprint: entry.fingerprint, expires: entry.expires)
        case .forged: return signers[0].sign(name: entry.name, fingerprint: entry.fingerprint, expires: entry.expires + 1)
        case .wrong: return MergeTests.wrongSignature
        case .garbage: return "AAAA"
        case .missing: return nil
        case .empty: return ""
        }
    }

    static func cachedPin(_ entry: Entry, tag: Int?) -> Pin {
        Pin(
            name: entry.name, fingerprint: entry.fingerprint, expires: entry.expires,
            signature: signature(Entry(name: entry.name, fingerprint: entry.fingerprint, expires: entry.expires, signature: .by(tag ?? 0))),
            key: tag.map { signers[$0].publicKey.id })
    }

    /// The pins a published file would hold: each identity once, in published order.
    static func publishedOrder(_ pins: [Pin]) -> [Pin] {
        var seen = Set<Pin.Identity>()
        return pins.filter { seen.insert($0.identity).inserted }.sorted(by: Pin.publishedOrder)
    }
}
