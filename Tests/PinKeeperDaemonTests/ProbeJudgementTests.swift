import Foundation
import PinKeeper
@testable import PinKeeperDaemon
import Testing

/// What the pins say about a served, verified chain: the reader's question, then how long the
/// answer lasts. Real certificates (leaf ← intermediate ← root, each valid for one day, made by
/// the openssl CLI) against a published cache file.
@Suite("Probe outcomes from the pins")
struct ProbeJudgementTests {
    static let name = "api.example.test"
    /// The verified chain (leaf, intermediate, root) and a second leaf from the same
    /// intermediate, read into memory; the files go with the `TestPKI`.
    static let certificates: (chain: [Certificate], next: Certificate) = {
        let pki = TestPKI("judgement")
        pki.ca("root")
        pki.ca("intermediate", issuer: "root")
        pki.leaf("leaf", issuer: "intermediate", host: name)
        pki.leaf("next", issuer: "intermediate", host: name)
        let read = { (part: String) -> Certificate in
            guard let data = FileManager.default.contents(atPath: pki.pem(part)),
                let certificate = try? Certificate.chain(from: Array(data)).first
            else { preconditionFailure("cannot read \(part)") }
            return certificate
        }
        return (["leaf", "intermediate", "root"].map(read), read("next"))
    }()
    static var chain: [Certificate] { certificates.chain }
    static var leaf: Certificate { chain[0] }
    static var leafExpiry: Int64 { leaf.notAfter ?? 0 }
    static let other: [UInt8] = [UInt8](repeating: 7, count: 32)
    static let hour: Int64 = 3_600, day: Int64 = 86_400

    private func judge(
        _ pins: [Pin], threshold: Int64 = hour, expected: [String]? = nil,
        domainsConfig: DomainsConfig? = nil
    ) throws -> (ProbeOutcome, String) {
        let world = try ReaderWorld()
        try world.publish("api", pins, domainsConfig: domainsConfig)
        let reader = try CacheReader(store: "api", cacheDirectory: world.cache.path, expectedCommonNames: expected)
        return ProbeJudgement.judge(chain: Self.chain, name: Self.name, reader: reader, threshold: threshold, now: ReaderWorld.now)
    }

    private func pin(_ fingerprint: [UInt8], expires: Int64 = ReaderWorld.future, depth: Int = 0, name: String = name) -> Pin {
        Pin(name: name, fingerprint: fingerprint, expires: expires, depth: depth)
    }

    @Test("the leaf pinned at depth 0: pinned until the leaf expires")
    func leafPinned() throws {
        let (outcome, reason) = try judge([pin(Self.leaf.fingerprint)])
        #expect(outcome == .pinned)
        #expect(reason == "the served certificate is pinned until \(Timestamp.iso(Self.leafExpiry))")
    }

    @Test("the intermediate pinned at depth 1 (or the root at depth 2): pinned")
    func deeperPins() throws {
        for depth in [1, 2] {
            let (outcome, reason) = try judge([pin(Self.chain[depth].fingerprint, depth: depth)])
            #expect(outcome == .pinned, "depth \(depth): \(reason)")
            #expect(reason.hasPrefix("the certificate at depth \(depth) of the served chain is pinned until"))
        }
    }

    @Test("no pin matches: unpinned; the leaf pinned at the wrong depth or under another name does not count")
    func unpinned() throws {
        let (outcome, reason) = try judge([pin(Self.other), pin(Self.leaf.fingerprint, depth: 1)])
        #expect(outcome == .unpinned)
        #expect(reason.contains("matches none of the 2 valid pins for '\(Self.name)'"))

        let elsewhere = try judge([pin(Self.other), pin(Self.leaf.fingerprint, name: "www.example.test")])
        #expect(elsewhere.0 == .unpinned)
    }

    @Test("no valid pin for the name (none at all, or only expired ones): unpinned")
    func empty() throws {
        for pins in [[], [pin(Self.leaf.fingerprint, expires: ReaderWorld.now - 10)]] {
            let (outcome, reason) = try judge(pins)
            #expect(outcome == .unpinned)
            #expect(reason.hasPrefix("the store has no valid pin for '\(Self.name)'"))
        }
    }

    @Test("the name outside expected_common_names: unpinned, even with a matching pin")
    func unexpectedName() throws {
        let (outcome, reason) = try judge([pin(Self.leaf.fingerprint)], expected: ["www.example.test"])
        #expect(outcome == .unpinned)
        #expect(reason.contains("expected_common_names"))
    }

    @Test("domainsConfig does not require pinning for the name: pinned without a matching pin")
    func notRequired() throws {
        let config = DomainsConfig(sslPinningRequiredForUnlisted: true, domains: [.init(name: Self.name, sslPinningRequired: false)])
        let (outcome, reason) = try judge([pin(Self.other)], domainsConfig: config)
        #expect(outcome == .pinned)
        #expect(reason.contains("domainsConfig"))
    }

    @Test("the only pin for the served certificate expires within the threshold, before the certificate: expiring")
    func pinExpiring() throws {
        let expires = ReaderWorld.now + Self.hour / 2
        // A pin for another certificate does not help: the host serves this one until it expires.
        let (outcome, reason) = try judge([pin(Self.leaf.fingerprint, expires: expires), pin(Self.other)])
        #expect(outcome == .expiring)
        #expect(reason.contains("the only pins for the served certificate expire \(Timestamp.iso(expires))"))
        // A later pin for the same certificate: pinned again.
        let renewed = try judge([pin(Self.leaf.fingerprint, expires: expires), pin(Self.leaf.fingerprint)])
        #expect(renewed.0 == .pinned)
    }

    @Test("the served certificate expires within the threshold: expiring until a replacement is pinned")
    func certificateExpiring() throws {
        let threshold = 2 * Self.day  // the test certificates live one day
        let alone = try judge([pin(Self.leaf.fingerprint)], threshold: threshold)
        #expect(alone.0 == .expiring)
        #expect(
            alone.1 == "the served certificate expires \(Timestamp.iso(Self.leafExpiry)), within expiration_update_threshold, "
                + "and no replacement certificate is pinned for '\(Self.name)'")

        let next = Self.certificates.next
        let replaced = try judge([pin(Self.leaf.fingerprint), pin(next.fingerprint)], threshold: threshold)
        #expect(replaced.0 == .pinned)
        #expect(replaced.1.contains("a replacement certificate is already pinned"))

        // A "replacement" that runs out before the served certificate replaces nothing.
        let short = try judge([pin(Self.leaf.fingerprint), pin(next.fingerprint, expires: Self.leafExpiry - 60)], threshold: threshold)
        #expect(short.0 == .expiring)
    }
}
