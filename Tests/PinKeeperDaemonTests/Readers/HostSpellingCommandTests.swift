import Foundation
import PinKeeper
import TestSupport
import Testing

/// One spelling of the host (docs/protocol.md) through `pinkeeper validate` and `pinkeeper
/// probe`, with real TLS servers on 127.0.0.1 and ::1: another spelling of a listed address is
/// that address, never an unlisted name whose domainsConfig rule switches pinning off.
@Suite("One spelling of the host: validate and probe on loopback")
struct HostSpellingCommandTests {
    /// The trap: unlisted names need no pinning, the loopback addresses do.
    static let onlyLoopback = DomainsConfig(
        sslPinningRequiredForUnlisted: false,
        domains: [.init(name: "::1", sslPinningRequired: true), .init(name: "127.0.0.1", sslPinningRequired: true)])
    static let elsewhere = [UInt8](repeating: 9, count: 32)

    /// root ← leaf for `localhost`, 127.0.0.1 and ::1, served on `address`.
    private func serve(_ label: String, on address: String) throws -> (TestPKI, FixtureServer) {
        let pki = TestPKI("spelling-\(label)")
        pki.ca("root")
        pki.leaf("leaf", issuer: "root", addresses: ["127.0.0.1", "::1"])
        return (pki, try FixtureServer(certificateFile: pki.pem("leaf"), keyFile: pki.key("leaf"), address: address))
    }

    private func world(pinning digest: [UInt8], extra: String = "") throws -> ReaderWorld {
        let world = try ReaderWorld()
        try world.configure([.init(id: "api", extra: extra)])
        let pins = ["::1", "127.0.0.1"].map { Pin(name: $0, fingerprint: digest, expires: ReaderWorld.future) }
        try world.publish("api", pins, domainsConfig: Self.onlyLoopback)
        return world
    }

    private func connect(_ world: ReaderWorld, name: String, to endpoint: String, _ pki: TestPKI) -> ChildProcess.Result {
        world.run(
            "validate", ["--store", "api", "--name", name, "--connect", endpoint], environment: ["SSL_CERT_FILE": pki.pem("root")])
    }

    @Test(
        "--connect: ::1 spelt long, with zero groups or upper-case is ::1, pinned elsewhere: untrusted (1)",
        arguments: ["::1", "0:0:0:0:0:0:0:1", "::0:1", "0000::1", "[::1]"])
    func ipv6SpellingsAreOneHost(name: String) throws {
        let (pki, server) = try serve("v6", on: "::1")
        let world = try world(pinning: Self.elsewhere)
        let result = connect(world, name: name, to: "[::1]:\(server.port)", pki)
        #expect(result.status == 1, "\(result.stdout)\(result.stderr)")
        #expect(result.stdout.hasPrefix("untrusted: store 'api' pins '::1' (certificate common name 'localhost')"), "\(result.stdout)")
        #expect(result.stdout.contains("chain and IP address verified for '::1'"), "\(result.stdout)")
        #expect(result.stdout.contains("no server name (an IP address is not sent as SNI)"), "\(result.stdout)")
    }

    @Test("--connect: the long spelling of ::1 is trusted by the pin listed under ::1 (0)")
    func ipv6SpellingMatchesThePin() throws {
        let (pki, server) = try serve("v6-pinned", on: "::1")
        let world = try world(pinning: OpenSSL.digest(pem: pki.pem("leaf")))
        let result = connect(world, name: "0:0:0:0:0:0:0:1", to: "[::1]:\(server.port)", pki)
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        #expect(result.stdout.hasPrefix("trusted\n"))
        #expect(result.stdout.contains("note: --name '0:0:0:0:0:0:0:1' is the host '::1' in its one spelling"))
    }

    @Test(
        "--connect and --certificate: a refused spelling of 127.0.0.1 is untrusted (1), never an unlisted name",
        arguments: ["127.000.000.001", "127.0.0.01", "0177.0.0.1", "127.1", "0x7f.0.0.1", "127.0.0.1."])
    func refusedIPv4Spellings(name: String) throws {
        let (pki, server) = try serve("v4", on: "127.0.0.1")
        let world = try world(pinning: Self.elsewhere)
        let connected = connect(world, name: name, to: "127.0.0.1:\(server.port)", pki)
        #expect(connected.status == 1, "\(connected.stdout)\(connected.stderr)")
        #expect(connected.stdout.hasPrefix("untrusted: --name '\(name)' is a host spelling that is refused"), "\(connected.stdout)")
        let file = world.run("validate", ["--store", "api", "--name", name, "--certificate", pki.pem("leaf")])
        #expect(file.status == 1, "\(file.stdout)\(file.stderr)")
        #expect(file.stdout.hasPrefix("untrusted: --name '\(name)' is a host spelling that is refused"), "\(file.stdout)")
        // The one spelling itself is asked about the pins listed for it.
        let listed = world.run("validate", ["--store", "api", "--name", "127.0.0.1", "--certificate", pki.pem("leaf")])
        #expect(listed.status == 1, "\(listed.stdout)\(listed.stderr)")
        #expect(listed.stdout.hasPrefix("untrusted: store 'api' pins '127.0.0.1' (certificate common name 'localhost')"))
    }

    @Test("probe: a target spelt [0:0:0:0:0:0:0:1] is judged as ::1, whose pins the served chain misses (1)")
    func probeJudgesTheOneSpelling() throws {
        let (pki, server) = try serve("probe", on: "::1")
        let target = "[0:0:0:0:0:0:0:1]:\(server.port)"
        let world = try world(
            pinning: Self.elsewhere, extra: "probe = [\"\(target)\"]\nprobe_ca_file = \"\(pki.pem("root"))\"\nrequest_timeout = \"5s\"")
        let result = world.run("probe", [])
        #expect(result.status == 1, "\(result.stdout)\(result.stderr)")
        #expect(result.stdout.contains("api \(target) unpinned "), "\(result.stdout)")
        #expect(result.stdout.contains("for '::1'"), "\(result.stdout)")
    }
}
