import PinKeeper
import Testing

/// docs/protocol.md §5: the host the client verified (H) and the leaf's common name (N) both take
/// part; the name the certificate chose never lifts the host's requirement to match a pin.
@Suite("The host decides")
struct HostDecidesTests {
    let now = Sample.now
    let host = "api.example.com"

    func verdict(
        _ pins: [Pin], _ fingerprint: UInt8, commonName: String?, domains: DomainsConfig? = nil,
        expected: [String]? = nil
    ) -> Verdict {
        PinValidator(pins: pins, expectedCommonNames: expected, domainsConfig: domains)
            .validate(PeerNames(host: host, commonName: commonName), fingerprint: Sample.digest(fingerprint), now: now)
    }

    /// "Pin only my API": the host requires pinning, unlisted names do not.
    let onlyTheAPI = DomainsConfig(
        sslPinningRequiredForUnlisted: false,
        domains: [
            .init(name: "api.example.com", sslPinningRequired: true),
            .init(name: "static.example.com", sslPinningRequired: false),
        ])

    @Test("a CN the certificate chose cannot switch pinning off for a required host")
    func commonNameCannotExemptTheHost() {
        let pins = [Sample.pin(host, 0x01)]
        // The review's attack: a mis-issued certificate for the host with an unlisted CN.
        #expect(verdict(pins, 0x03, commonName: "unlisted.example", domains: onlyTheAPI) == .untrusted)
        #expect(verdict(pins, 0x03, commonName: "static.example.com", domains: onlyTheAPI) == .untrusted)
        // Nor the other way round: a required CN keeps pinning on for an exempt host.
        let exemptHost = DomainsConfig(sslPinningRequiredForUnlisted: true, domains: [.init(name: host, sslPinningRequired: false)])
        #expect(verdict(pins, 0x03, commonName: "other.example.com", domains: exemptHost) == .untrusted)
        #expect(verdict(pins, 0x03, commonName: nil, domains: exemptHost) == .trusted)
        #expect(
            verdict(pins, 0x03, commonName: "STATIC.example.com", domains: .init(sslPinningRequiredForUnlisted: false, domains: []))
                == .trusted)
    }

    @Test("pins under either name may match: MUS lists name the host, SSL Pinning Tool lists the CN")
    func eitherNamesPinsMatch() {
        #expect(verdict([Sample.pin(host, 0x01)], 0x01, commonName: "gw-7.internal.example") == .trusted)
        #expect(verdict([Sample.pin("*.example.com", 0x01)], 0x01, commonName: "*.example.com") == .trusted)
        #expect(verdict([Sample.pin("*.example.com", 0x01)], 0x01, commonName: nil) == .empty)
        // A CN naming another pinned host only adds that host's pins to compare.
        #expect(verdict([Sample.pin(host, 0x01), Sample.pin("pay.example.com", 0x02)], 0x03, commonName: "pay.example.com") == .untrusted)
        #expect(verdict([Sample.pin("pay.example.com", 0x02)], 0x03, commonName: "unlisted.example") == .empty)
    }

    @Test("expected names pass when the host or the CN is listed")
    func expectedNames() {
        let pins = [Sample.pin(host, 0x01), Sample.pin("*.example.com", 0x01)]
        #expect(verdict(pins, 0x01, commonName: "gw-7.internal.example", expected: [host]) == .trusted)
        #expect(verdict(pins, 0x01, commonName: "*.example.com", expected: ["*.EXAMPLE.com"]) == .trusted)
        #expect(verdict(pins, 0x01, commonName: "cdn.example.com", expected: ["www.example.com"]) == .untrusted)
        #expect(verdict(pins, 0x01, commonName: nil, expected: []) == .untrusted)
    }

    @Test(
        "names compare by Unicode scalars, folding ASCII letters and nothing else",
        arguments: [
            ("api.example.com", "API.Example.COM", true, Verdict.trusted),
            // Canonically equivalent, two names; and a host with non-ASCII letters is asked as
            // its A-label, which no pin spelt in Unicode matches.
            ("caf\u{E9}.example", "cafe\u{301}.example", false, .empty),
            ("b\u{FC}cher.example", "B\u{DC}CHER.example", false, .empty),  // non-ASCII letters do not fold
            ("kiosk.example", "\u{212A}iosk.example", false, .empty),  // the Kelvin sign lower-cases to k in Unicode
            ("\u{131}nfo.example", "INFO.example", false, .empty),  // the dotless i upper-cases to I in Unicode
            // Two names, but one host: the trailing dot is a spelling the host drops.
            ("api.example.com", "api.example.com.", false, .trusted),
            ("", "", true, .untrusted),  // an empty host is refused whatever is pinned
        ])
    func nameComparison(pinned: String, asked: String, same: Bool, verdict: Verdict) {
        #expect(PinName(pinned) == PinName(asked) ? same : !same)
        #expect(PinName(pinned).matches(asked) == same)
        #expect(PinName.same(asked, pinned) == same)
        let answer = PinValidator(pins: [Sample.pin(pinned, 0x01)])
            .validate(PeerNames(host: asked), fingerprint: Sample.digest(0x01), now: now)
        #expect(answer == verdict)
    }

    @Test("two spellings of a name are two pins, never one pin's duplicate")
    func identityComparesScalars() {
        let precomposed = Sample.pin("caf\u{E9}.example", 0x01), decomposed = Sample.pin("cafe\u{301}.example", 0x01)
        #expect(precomposed.identity != decomposed.identity)
        #expect(Set([precomposed.identity, decomposed.identity]).count == 2)
        #expect(Pin.publishedOrder(precomposed, decomposed) != Pin.publishedOrder(decomposed, precomposed))
    }

    @Test("an empty host is untrusted: the CN alone never decides, even where domainsConfig exempts it")
    func emptyHost() {
        #expect(verdictFor(host: "", commonName: "unlisted.example", domains: onlyTheAPI) == .untrusted)
        #expect(verdictFor(host: "", commonName: host, pinned: 0x01) == .untrusted)
    }

    func verdictFor(host: String, commonName: String?, domains: DomainsConfig? = nil, pinned: UInt8 = 0x02) -> Verdict {
        PinValidator(pins: [Sample.pin(self.host, pinned)], domainsConfig: domains)
            .validate(PeerNames(host: host, commonName: commonName), fingerprint: Sample.digest(0x01), now: now)
    }

    @Test("messages name the host, and the CN when it differs")
    func described() {
        #expect(PeerNames(host: host).described == "'api.example.com'")
        #expect(PeerNames(host: host, commonName: "API.example.com").described == "'api.example.com'")
        #expect(PeerNames(host: host, commonName: "x.example").described == "'api.example.com' (certificate common name 'x.example')")
    }
}
