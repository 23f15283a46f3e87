import Foundation
import Glibc
import PinKeeper
import TestSupport
import Testing

/// `pinkeeper validate --connect`: real TLS handshakes with the loopback fixture server,
/// trusting the test CA through `SSL_CERT_FILE` (or the store's `ca_file`).
@Suite("pinkeeper validate --connect: live TLS on loopback")
struct ConnectTests {
    static let server = TestEnvironment.certificate("server.pem")
    static let ca = TestEnvironment.certificate("ca.pem")
    static let trustTestCA = ["SSL_CERT_FILE": ca]

    /// A world whose store pins the fixture's `server.pem` for `localhost`.
    private func pinnedWorld(extra: String = "") throws -> ReaderWorld {
        let world = try ReaderWorld()
        try world.configure([.init(id: "api", extra: extra)])
        try world.publish("api", [Pin(name: "localhost", fingerprint: OpenSSL.digest(pem: Self.server), expires: ReaderWorld.future)])
        return world
    }

    private func connect(
        _ world: ReaderWorld, port: Int, name: String = "localhost", host: String = "127.0.0.1",
        environment: [String: String] = ConnectTests.trustTestCA, timeout: String = "10"
    ) -> ChildProcess.Result {
        world.run(
            "validate", ["--store", "api", "--name", name, "--connect", "\(host):\(port)", "--timeout", timeout],
            environment: environment)
    }

    @Test("the pinned certificate: verified, then trusted (0); the verified chain is printed")
    func pinned() throws {
        let server = try FixtureServer(), world = try pinnedWorld()
        let result = connect(world, port: server.port)
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        #expect(result.stdout.contains("connected to 127.0.0.1:\(server.port)"))
        #expect(result.stdout.contains("depth 0: CN=localhost  sha256 \(OpenSSL.fingerprint(pem: Self.server))"))
        #expect(result.stdout.contains("chain and host name verified for 'localhost'"))
        #expect(result.stdout.hasPrefix("trusted\n"))
    }

    @Test("a valid certificate that is not pinned: untrusted (1), and its fingerprint is shown to pin it")
    func unpinned() throws {
        _ = OpenSSL.extraCertificates
        let server = try FixtureServer(certificate: "readers/other"), world = try pinnedWorld()
        let result = connect(world, port: server.port)
        #expect(result.status == 1, "\(result.stdout)\(result.stderr)")
        #expect(result.stdout.contains("chain and host name verified"))
        let other = OpenSSL.fingerprint(pem: TestEnvironment.certificate("readers/other.pem"))
        #expect(result.stdout.contains("depth 0: CN=localhost  sha256 \(other)"))
        #expect(result.stdout.contains("untrusted: store 'api' pins 'localhost', but not this certificate"))
    }

    @Test("a chain of two: a pin at depth 1 matches the CA certificate, which the server also sent")
    func chainDepth() throws {
        _ = OpenSSL.extraCertificates
        let server = try FixtureServer(certificate: "readers/chained"), world = try ReaderWorld()
        try world.configure([.init(id: "api")])
        try world.publish("api", [Pin(name: "localhost", fingerprint: OpenSSL.digest(pem: Self.ca), expires: ReaderWorld.future, depth: 1)])
        let result = connect(world, port: server.port)
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        #expect(result.stdout.contains("depth 1: CN=pinkeeper test CA  sha256 \(OpenSSL.fingerprint(pem: Self.ca))"))
    }

    @Test("a pinned CA certificate the server appends outside the leaf's path does not count: untrusted (1)")
    func appendedIntermediate() throws {
        // The attack: any CA-valid leaf for the name, followed by a genuine, public certificate
        // that the store pins at depth 1. OpenSSL builds the path without it.
        let pki = TestPKI("appended")
        let root = pki.ca("root")
        pki.ca("pinned", issuer: "root")  // valid, but not the leaf's issuer
        pki.leaf("leaf", issuer: "root")
        pki.bundle("presented", ["leaf", "pinned"])
        let server = try FixtureServer(certificateFile: pki.pem("presented"), keyFile: pki.key("presented"))
        let world = try ReaderWorld()
        try world.configure([.init(id: "api")])
        let pinned = OpenSSL.fingerprint(pem: pki.pem("pinned"))
        try world.publish(
            "api",
            [
                Pin(
                    name: "localhost", fingerprint: OpenSSL.digest(pem: pki.pem("pinned")),
                    expires: ReaderWorld.future, depth: 1)
            ])
        let result = connect(world, port: server.port, environment: ["SSL_CERT_FILE": pki.pem("root")])
        #expect(result.status == 1, "\(result.stdout)\(result.stderr)")
        #expect(result.stdout.contains("chain and host name verified for 'localhost'"))
        #expect(result.stdout.contains("depth 1: CN=\(root)  sha256 \(OpenSSL.fingerprint(pem: pki.pem("root")))"))
        #expect(!result.stdout.contains("depth 1: CN=pinkeeper test pinned"))
        #expect(result.stdout.contains("not in the verified chain, ignored: CN=pinkeeper test pinned"))
        #expect(result.stdout.contains(pinned))
        #expect(result.stdout.contains("untrusted: store 'api' pins 'localhost', but not this certificate"))
    }

    @Test("leaf ← intermediate ← root: the intermediate pinned at depth 1 is trusted, the root (not sent) is depth 2")
    func verifiedIntermediate() throws {
        let pki = TestPKI("intermediate")
        let root = pki.ca("root")
        let intermediate = pki.ca("intermediate", issuer: "root")
        pki.leaf("leaf", issuer: "intermediate")
        pki.bundle("presented", ["leaf", "intermediate"])
        let server = try FixtureServer(certificateFile: pki.pem("presented"), keyFile: pki.key("presented"))
        let trustRoot = ["SSL_CERT_FILE": pki.pem("root")]
        for (depth, name) in [(1, "intermediate"), (2, "root")] {
            let world = try ReaderWorld()
            try world.configure([.init(id: "api")])
            try world.publish(
                "api",
                [
                    Pin(
                        name: "localhost", fingerprint: OpenSSL.digest(pem: pki.pem(name)),
                        expires: ReaderWorld.future, depth: depth)
                ])
            let result = connect(world, port: server.port, environment: trustRoot)
            #expect(result.status == 0, "depth \(depth): \(result.stdout)\(result.stderr)")
            #expect(result.stdout.contains("depth 1: CN=\(intermediate)  sha256 \(OpenSSL.fingerprint(pem: pki.pem("intermediate")))"))
            #expect(result.stdout.contains("depth 2: CN=\(root)  sha256 \(OpenSSL.fingerprint(pem: pki.pem("root")))"))
            #expect(!result.stdout.contains("not in the verified chain"))
        }
    }

    @Test("no pin for the name: empty (2)")
    func empty() throws {
        let server = try FixtureServer(), world = try ReaderWorld()
        try world.configure([.init(id: "api")])
        let result = connect(world, port: server.port)
        #expect(result.status == 2, "\(result.stdout)\(result.stderr)")
    }

    @Test("the store's ca_file is trusted without SSL_CERT_FILE; without either, verification fails (1)")
    func storeCAFile() throws {
        let server = try FixtureServer()
        let withCA = try pinnedWorld(extra: "ca_file = \"\(Self.ca)\"")
        let trusted = connect(withCA, port: server.port, environment: [:])
        #expect(trusted.status == 0, "\(trusted.stdout)\(trusted.stderr)")

        let without = try pinnedWorld()
        let refused = connect(without, port: server.port, environment: [:])
        #expect(refused.status == 1)
        #expect(refused.stdout.contains("untrusted: TLS verification for 'localhost' failed"))
        #expect(refused.stdout.contains("pins were not consulted"))
    }

    @Test("a ca_file without certificates is a configuration error (78) that names the file, found before connecting")
    func unusableCAFile() throws {
        let world = try ReaderWorld()
        let bogus = try world.file("bogus-ca.pem", Data("this is not a certificate\n".utf8))
        try world.configure([.init(id: "api", extra: "ca_file = \"\(bogus)\"")])
        // Nothing listens on port 1: a connection attempt would exit 69.
        let result = connect(world, port: 1, environment: [:])
        #expect(result.status == 78, "\(result.stdout)\(result.stderr)")
        #expect(result.stderr.contains(bogus))
    }

    @Test("verification comes first: a pinned self-signed certificate or a host name mismatch is untrusted (1)")
    func verificationFirst() throws {
        // The self-signed certificate is pinned, yet no CA vouches for it.
        let selfSigned = try FixtureServer(certificate: "untrusted"), world = try ReaderWorld()
        try world.configure([.init(id: "api")])
        try world.publish(
            "api",
            [
                Pin(
                    name: "localhost", fingerprint: OpenSSL.digest(pem: TestEnvironment.certificate("untrusted.pem")),
                    expires: ReaderWorld.future),
                Pin(name: "localhost", fingerprint: OpenSSL.digest(pem: Self.server), expires: ReaderWorld.future),
            ])
        let result = connect(world, port: selfSigned.port)
        #expect(result.status == 1, "\(result.stdout)\(result.stderr)")
        #expect(result.stdout.contains("self-signed certificate"))
        #expect(result.stdout.contains("presented by the server (not verified)"))
        #expect(result.stdout.contains("position 0: CN=localhost"))

        // The pinned server certificate, asked for under a name it does not carry.
        let server = try FixtureServer()
        let mismatch = connect(world, port: server.port, name: "api.example.com")
        #expect(mismatch.status == 1)
        #expect(mismatch.stdout.contains("hostname mismatch"))
    }

    @Test("connection refused exits 69, an unknown host 68, a silent server times out with 69")
    func unavailable() throws {
        let world = try pinnedWorld()
        let closed = try SilentListener()
        let port = closed.port
        closed.close()
        let refused = connect(world, port: port)
        #expect(refused.status == 69)
        #expect(refused.stderr.contains("Connection refused"))

        let unknown = world.run(
            "validate", ["--store", "api", "--name", "localhost", "--connect", "host.invalid:443"],
            environment: Self.trustTestCA)
        #expect(unknown.status == 68)
        #expect(unknown.stderr.contains("cannot resolve host.invalid"))

        // Accepts TCP (the kernel's backlog) but never answers the ClientHello.
        let silent = try SilentListener()
        let started = Date()
        let timedOut = connect(world, port: silent.port, timeout: "1")
        #expect(timedOut.status == 69)
        #expect(timedOut.stderr.contains("timed out"))
        #expect(Date().timeIntervalSince(started) < 8)
        silent.close()
    }
}
