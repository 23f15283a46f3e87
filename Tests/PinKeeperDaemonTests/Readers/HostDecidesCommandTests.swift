import Foundation
import Glibc
import PinKeeper
import TestSupport
import Testing

/// docs/protocol.md §5 through `pinkeeper validate` and `pinkeeper probe`, with certificates whose
/// common name differs from the host they were issued for (SAN), served over loopback TLS.
@Suite("The host decides: validate and probe with a certificate that chose its own CN")
struct HostDecidesCommandTests {
    /// "Pin only my API": `localhost` requires pinning, unlisted names do not.
    static let onlyLocalhost = DomainsConfig(
        sslPinningRequiredForUnlisted: false,
        domains: [
            .init(name: "localhost", sslPinningRequired: true), .init(name: "static.example.com", sslPinningRequired: false),
        ])
    static let elsewhere = [UInt8](repeating: 9, count: 32)

    /// root ← leaf for `localhost` (SAN) whose CN is `commonName`, served on loopback.
    private func serve(_ label: String, commonName: String) throws -> (TestPKI, FixtureServer) {
        let pki = TestPKI("cn-\(label)")
        pki.ca("root")
        pki.leaf("leaf", issuer: "root", commonName: commonName)
        return (pki, try FixtureServer(certificateFile: pki.pem("leaf"), keyFile: pki.key("leaf")))
    }

    private func world(_ pins: [Pin], domainsConfig: DomainsConfig? = nil, extra: String = "") throws -> ReaderWorld {
        let world = try ReaderWorld()
        try world.configure([.init(id: "api", extra: extra)])
        try world.publish("api", pins, domainsConfig: domainsConfig)
        return world
    }

    private func connect(_ world: ReaderWorld, _ pki: TestPKI, _ server: FixtureServer) -> ChildProcess.Result {
        world.run(
            "validate", ["--store", "api", "--name", "localhost", "--connect", "127.0.0.1:\(server.port)"],
            environment: ["SSL_CERT_FILE": pki.pem("root")])
    }

    @Test(
        "a mis-issued certificate whose CN domainsConfig exempts is untrusted (1), not waved through",
        arguments: ["unlisted.example", "static.example.com"])
    func exemptCommonName(commonName: String) throws {
        let (pki, server) = try serve("exempt", commonName: commonName)
        let world = try world(
            [Pin(name: "localhost", fingerprint: Self.elsewhere, expires: ReaderWorld.future)],
            domainsConfig: Self.onlyLocalhost)
        let result = connect(world, pki, server)
        #expect(result.status == 1, "\(result.stdout)\(result.stderr)")
        #expect(result.stdout.contains("chain and host name verified for 'localhost'"))
        #expect(
            result.stdout.contains(
                "untrusted: store 'api' pins 'localhost' (certificate common name '\(commonName)'), but not this certificate"))

        // The same certificate as a file stands for the same verified chain.
        let file = world.run("validate", ["--store", "api", "--name", "localhost", "--certificate", pki.pem("leaf")])
        #expect(file.status == 1, "\(file.stdout)\(file.stderr)")
    }

    @Test("pins under the host match a leaf whose CN differs (MUS lists name the registered host): trusted (0)")
    func pinsUnderTheHost() throws {
        let (pki, server) = try serve("mus", commonName: "gw-7.internal.example")
        let world = try world(
            [Pin(name: "localhost", fingerprint: OpenSSL.digest(pem: pki.pem("leaf")), expires: ReaderWorld.future)],
            domainsConfig: Self.onlyLocalhost)
        let result = connect(world, pki, server)
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        #expect(result.stdout.contains("note: the leaf's common name 'gw-7.internal.example' differs from --name 'localhost'"))
    }

    @Test("pins under a wildcard CN match its certificate (SSL Pinning Tool lists); expected names pass on either name")
    func pinsUnderTheCommonName() throws {
        let (pki, server) = try serve("wildcard", commonName: "*.example.com")
        let pin = Pin(name: "*.example.com", fingerprint: OpenSSL.digest(pem: pki.pem("leaf")), expires: ReaderWorld.future)
        let listed = try world([pin], extra: "expected_common_names = [\"*.example.com\"]")
        let result = connect(listed, pki, server)
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        // Without the chain, the host alone has no pin.
        let fingerprint = listed.run("validate", ["--store", "api", "--name", "localhost", "--fingerprint", pin.fingerprintBase64])
        #expect(fingerprint.status == 1, "\(fingerprint.stdout)")  // and it is not an expected name either

        let unlisted = try world([pin], extra: "expected_common_names = [\"api.example.com\"]")
        let refused = connect(unlisted, pki, server)
        #expect(refused.status == 1, "\(refused.stdout)\(refused.stderr)")
        #expect(
            refused.stdout.contains(
                "untrusted: 'localhost' (certificate common name '*.example.com') is not among the expected_common_names"))
    }

    @Test("a probe of a host serving a certificate with an exempt CN finds it unpinned (1)")
    func probe() throws {
        let probe = try ProbeWorld("exempt-cn", leafCommonName: "unlisted.example")
        try probe.configure(probe.probeKeys())
        let required = DomainsConfig(
            sslPinningRequiredForUnlisted: false, domains: [.init(name: ProbeWorld.name, sslPinningRequired: true)])
        try probe.publish([Pin(name: ProbeWorld.name, fingerprint: Self.elsewhere, expires: ReaderWorld.future)], domainsConfig: required)
        let result = probe.probe()
        #expect(result.status == 1, "\(result.stdout)\(result.stderr)")
        #expect(result.stdout.contains("api api.example.test:443 unpinned "), "\(result.stdout)")
    }

    @Test("validate answers from the pins the configured keys vouch for, before update reconciles the file")
    func removedKeysPins() throws {
        let world = try ReaderWorld()
        try world.configure([.init(id: "api")])
        let configured = KeyRemovalTests.keyID(1)
        let digest = [UInt8](repeating: 7, count: 32)
        try world.publish("api", [Pin(name: "api.example.com", fingerprint: digest, expires: ReaderWorld.future, key: "00000000deadbeef")])
        let fingerprint = Pin(name: "", fingerprint: digest, expires: 0).fingerprintBase64
        let arguments = ["--store", "api", "--name", "api.example.com", "--fingerprint", fingerprint]
        let removed = world.run("validate", arguments)
        #expect(removed.status == 2, "\(removed.stdout)\(removed.stderr)")

        try world.publish("api", [Pin(name: "api.example.com", fingerprint: digest, expires: ReaderWorld.future, key: configured)])
        let kept = world.run("validate", arguments)
        #expect(kept.status == 0, "\(kept.stdout)\(kept.stderr)")
    }
}
