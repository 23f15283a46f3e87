import Foundation
import PinKeeper
import TestSupport
import Testing

@Suite("PinValidator (docs/protocol.md §5)")
struct ValidationTests {
    let now = Sample.now
    let name = "api.example.com"

    func verdict(
        _ pins: [Pin], _ fingerprint: UInt8, name: String? = nil, depth: Int = 0,
        expected: [String]? = nil, domains: DomainsConfig? = nil
    ) -> Verdict {
        PinValidator(pins: pins, expectedCommonNames: expected, domainsConfig: domains)
            .validate(PeerNames(host: name ?? self.name), fingerprint: Sample.digest(fingerprint), depth: depth, now: now)
    }

    // MARK: Basic verdicts

    @Test func matchingLivePinIsTrusted() {
        #expect(verdict([Sample.pin(name, 0x01)], 0x01) == .trusted)
    }

    @Test func differentFingerprintIsUntrusted() {
        #expect(verdict([Sample.pin(name, 0x01)], 0x02) == .untrusted)
    }

    @Test func emptyStoreIsEmpty() {
        #expect(verdict([], 0x01) == .empty)
    }

    @Test func noPinForTheNameIsEmpty() {
        #expect(verdict([Sample.pin("other.example.com", 0x01)], 0x01) == .empty)
    }

    @Test func anyOfSeveralPinsForTheNameMayMatch() {
        let pins = [Sample.pin(name, 0x01), Sample.pin(name, 0x02), Sample.pin(name, 0x03)]
        #expect(verdict(pins, 0x03) == .trusted)
        #expect(verdict(pins, 0x04) == .untrusted)
    }

    // MARK: Expiry

    @Test func expiredPinIsNeverTrusted() {
        #expect(verdict([Sample.pin(name, 0x01, expires: now - 1)], 0x01) == .empty)
    }

    @Test func expiredMatchBesideALiveMismatchIsUntrusted() {
        let pins = [Sample.pin(name, 0x01, expires: now - 1), Sample.pin(name, 0x02)]
        #expect(verdict(pins, 0x01) == .untrusted)
    }

    @Test func pinExpiringExactlyNowIsStillValid() {
        #expect(verdict([Sample.pin(name, 0x01, expires: now)], 0x01) == .trusted)
    }

    // MARK: expected_common_names

    @Test func unexpectedNameIsUntrustedEvenOnAnEmptyStore() {
        #expect(verdict([], 0x01, expected: ["other.example.com"]) == .untrusted)
    }

    @Test func unexpectedNameIsUntrustedEvenWithAMatchingPin() {
        #expect(verdict([Sample.pin(name, 0x01)], 0x01, expected: ["other.example.com"]) == .untrusted)
    }

    @Test func expectedNameIsValidatedNormally() {
        let expected = [name, "other.example.com"]
        #expect(verdict([Sample.pin(name, 0x01)], 0x01, expected: expected) == .trusted)
        #expect(verdict([Sample.pin(name, 0x01)], 0x02, expected: expected) == .untrusted)
        #expect(verdict([], 0x01, expected: expected) == .empty)
    }

    // MARK: domainsConfig

    static func domains(unlisted: Bool) -> DomainsConfig {
        DomainsConfig(
            sslPinningRequiredForUnlisted: unlisted,
            domains: [
                .init(name: "bypass.example.com", sslPinningRequired: false),
                .init(name: "api.example.com", sslPinningRequired: true),
            ])
    }

    @Test(arguments: [true, false])
    func listedDomainWithoutPinningIsTrusted(unlisted: Bool) {
        let pins = [Sample.pin("bypass.example.com", 0x01)]
        #expect(verdict(pins, 0x09, name: "bypass.example.com", domains: Self.domains(unlisted: unlisted)) == .trusted)
        #expect(verdict([], 0x09, name: "bypass.example.com", domains: Self.domains(unlisted: unlisted)) == .trusted)
    }

    @Test(arguments: [true, false])
    func listedDomainRequiringPinningIsChecked(unlisted: Bool) {
        let domains = Self.domains(unlisted: unlisted)
        #expect(verdict([Sample.pin(name, 0x01)], 0x02, domains: domains) == .untrusted)
        #expect(verdict([], 0x02, domains: domains) == .empty)
    }

    @Test func unlistedDomainFollowsSslPinningRequiredForUnlisted() {
        #expect(verdict([], 0x01, name: "new.example.com", domains: Self.domains(unlisted: false)) == .trusted)
        #expect(verdict([], 0x01, name: "new.example.com", domains: Self.domains(unlisted: true)) == .empty)
        #expect(
            verdict(
                [Sample.pin("new.example.com", 0x02)], 0x01, name: "new.example.com",
                domains: Self.domains(unlisted: true)) == .untrusted)
    }

    @Test func expectedCommonNamesComeBeforeTheServersDomainBypass() {
        // A signed domainsConfig must not widen the operator's expected_common_names.
        #expect(verdict([], 0x01, name: "bypass.example.com", expected: [name], domains: Self.domains(unlisted: true)) == .untrusted)
        #expect(
            verdict(
                [], 0x01, name: "bypass.example.com", expected: ["bypass.example.com"],
                domains: Self.domains(unlisted: true)) == .trusted)
    }

    // MARK: Depth

    let leafAndIntermediate = [Sample.pin("api.example.com", 0x01, depth: 0), Sample.pin("api.example.com", 0x02, depth: 1)]

    @Test func singleFingerprintIsComparedOnlyWithPinsOfItsDepth() {
        #expect(verdict(leafAndIntermediate, 0x01, depth: 0) == .trusted)
        #expect(verdict(leafAndIntermediate, 0x02, depth: 1) == .trusted)
        #expect(verdict(leafAndIntermediate, 0x02, depth: 0) == .untrusted)
        #expect(verdict(leafAndIntermediate, 0x01, depth: 1) == .untrusted)
        #expect(verdict(leafAndIntermediate, 0x01, depth: 2) == .empty)
    }

    static let leafDER: [UInt8] = Array("leaf certificate".utf8)
    static let intermediateDER: [UInt8] = Array("intermediate certificate".utf8)
    static let otherDER: [UInt8] = Array("some other certificate".utf8)

    func chainVerdict(_ pins: [Pin], _ chain: [[UInt8]]) -> Verdict {
        PinValidator(pins: pins).validate(PeerNames(host: name), verifiedChain: chain, now: now)
    }

    func pin(for der: [UInt8], depth: Int, expires: Int64? = nil) -> Pin {
        Pin(name: name, fingerprint: SHA256.digest(der), expires: expires ?? now + 60, depth: depth)
    }

    @Test func chainIsTrustedWhenThePinnedIntermediateMatches() {
        let pins = [pin(for: Self.otherDER, depth: 0), pin(for: Self.intermediateDER, depth: 1)]
        #expect(chainVerdict(pins, [Self.leafDER, Self.intermediateDER]) == .trusted)
    }

    @Test func chainIsTrustedWhenTheLeafMatches() {
        #expect(chainVerdict([pin(for: Self.leafDER, depth: 0)], [Self.leafDER, Self.intermediateDER]) == .trusted)
    }

    @Test func pinnedCertificateAtTheWrongDepthDoesNotMatch() {
        #expect(chainVerdict([pin(for: Self.leafDER, depth: 1)], [Self.leafDER, Self.intermediateDER]) == .untrusted)
    }

    @Test func chainWithNoMatchIsUntrusted() {
        let pins = [pin(for: Self.otherDER, depth: 0), pin(for: Self.otherDER, depth: 1)]
        #expect(chainVerdict(pins, [Self.leafDER, Self.intermediateDER]) == .untrusted)
    }

    @Test func pinsDeeperThanTheChainAreSkipped() {
        #expect(chainVerdict([pin(for: Self.intermediateDER, depth: 1)], [Self.leafDER]) == .empty)
        let pins = [pin(for: Self.intermediateDER, depth: 5), pin(for: Self.leafDER, depth: 0)]
        #expect(chainVerdict(pins, [Self.leafDER, Self.intermediateDER]) == .trusted)
    }

    @Test func expiredPinNeverMatchesAChain() {
        #expect(chainVerdict([pin(for: Self.leafDER, depth: 0, expires: now - 1)], [Self.leafDER]) == .empty)
    }

    // MARK: Common-name matching

    @Test func namesFoldASCIILettersOnly() {
        #expect(verdict([Sample.pin(name, 0x01)], 0x01, name: "API.example.com") == .trusted)
        // One trailing dot is part of the host's spelling, not of its one form.
        #expect(verdict([Sample.pin(name, 0x01)], 0x01, name: "api.example.com.") == .trusted)
        #expect(verdict([Sample.pin(name + ".", 0x01)], 0x01, name: "api.example.com.") == .empty)
    }

    @Test func wildcardIsALiteralName() {
        let pins = [Sample.pin("*.example.com", 0x01)]
        #expect(verdict(pins, 0x01, name: "www.example.com") == .empty)
        #expect(verdict(pins, 0x01, name: "*.example.com") == .trusted)
    }

    // MARK: SHA-256

    @Test func fingerprintOfTheToolTestCertificate() throws {
        let der = try Vectors.data("upstream/ssl-pinning-tool/www.google.com-2018.der")
        #expect(Data(SHA256.digest(Array(der))).base64EncodedString() == "nu1DOBz31Y5FY6lRNkJV/HdnB6BDVCp7mX0nxkbub7Y=")
    }

    @Test func digestOfKnownInputs() {
        let hex = { (bytes: [UInt8]) in bytes.map { String(format: "%02x", $0) }.joined() }
        #expect(hex(SHA256.digest(Array("abc".utf8))) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(hex(SHA256.digest([])) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
    }
}
