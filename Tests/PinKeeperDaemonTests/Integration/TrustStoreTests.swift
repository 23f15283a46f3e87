import Foundation
import Glibc
import PinKeeper
@testable import PinKeeperDaemon
import TestSupport
import Testing

/// A store's `ca_file` replaces the system trust store for list fetches and `validate --connect`;
/// it is never added to it. Each test serves a leaf from a CA that the system (or OpenSSL's
/// default trust) accepts and gives the store a `ca_file` naming another CA.
@Suite("ca_file replaces the system trust store")
struct TrustStoreTests {
    /// `system`: the CA the machine trusts, which signed the server's leaf; `configured`: the
    /// unrelated CA the store's `ca_file` names.
    private struct Setup {
        let pki: TestPKI
        let server: FixtureServer
        var system: String { pki.pem("system") }
        var configured: String { pki.pem("configured") }
        var leaf: String { pki.pem("leaf") }

        init(label: String) throws {
            pki = TestPKI(label)
            pki.ca("system")
            pki.ca("configured")
            pki.leaf("leaf", issuer: "system")
            server = try FixtureServer(certificateFile: pki.pem("leaf"), keyFile: pki.key("leaf"))
        }
    }

    private func fetch(_ url: String, caFile: String?) async -> Result<HTTPResponse, UpdateFailure> {
        let fetcher = CurlFetcher(userAgent: PinKeeperVersion.userAgent)
        do {
            return .success(try await fetcher.fetch(HTTPRequest(url: url, caFile: caFile, timeout: 10)))
        } catch {
            return .failure(error)
        }
    }

    /// A store `api` pinning the leaf, with `ca_file` when given.
    private func world(pinning leaf: String, caFile: String?) throws -> ReaderWorld {
        let world = try ReaderWorld()
        try world.configure([.init(id: "api", extra: caFile.map { "ca_file = \"\($0)\"" } ?? "")])
        try world.publish("api", [Pin(name: "localhost", fingerprint: OpenSSL.digest(pem: leaf), expires: ReaderWorld.future)])
        return world
    }

    private func connect(_ world: ReaderWorld, _ server: FixtureServer, environment: [String: String] = [:]) -> ChildProcess.Result {
        world.run(
            "validate", ["--store", "api", "--name", "localhost", "--connect", "127.0.0.1:\(server.port)"],
            environment: environment)
    }

    @Test("validate --connect with a ca_file ignores OpenSSL's default trust (SSL_CERT_FILE)")
    func connectIgnoresDefaultTrust() throws {
        let setup = try Setup(label: "default-trust")
        let defaultTrust = ["SSL_CERT_FILE": setup.system]

        // Without ca_file the default trust decides, and it accepts the server.
        let open = connect(try world(pinning: setup.leaf, caFile: nil), setup.server, environment: defaultTrust)
        #expect(open.status == 0, "\(open.stdout)\(open.stderr)")

        let result = connect(try world(pinning: setup.leaf, caFile: setup.configured), setup.server, environment: defaultTrust)
        #expect(result.status == 1, "\(result.stdout)\(result.stderr)")
        #expect(result.stdout.contains("untrusted: TLS verification for 'localhost' failed: unable to get local issuer certificate"))
    }

    @Test(
        "a CA in the system CA directory: trusted without ca_file, refused with one, by fetches and validate --connect",
        .enabled(if: SystemTrust.isAvailable, "needs root: it adds a test CA to the system CA directory while it runs"))
    func systemDirectoryIgnored() async throws {
        let setup = try Setup(label: SystemTrust.pkiLabel)
        let url = setup.server.url("list")

        // Before the CA is added, nothing on the machine vouches for the server.
        guard case .failure = await fetch(url, caFile: nil) else {
            Issue.record("the fresh test CA is trusted before it was added to \(SystemTrust.directories)")
            return
        }
        try await SystemTrust.trusting(setup.system) {
            // The system store now accepts the server: any HTTP answer means TLS verification passed.
            let open = await fetch(url, caFile: nil)
            #expect((try? open.get())?.status == 404, "\(open)")
            let openConnect = connect(try world(pinning: setup.leaf, caFile: nil), setup.server)
            #expect(openConnect.status == 0, "\(openConnect.stdout)\(openConnect.stderr)")

            // With ca_file, only that file's CA counts.
            switch await fetch(url, caFile: setup.configured) {
            case .success(let response):
                Issue.record("fetched with HTTP \(response.status) although ca_file does not hold the server's CA")
            case .failure(let failure):
                #expect(failure.result == .networkError)
                #expect(failure.reason.contains("TLS verification failed; check ca_file"), "\(failure.reason)")
            }
            let refused = connect(try world(pinning: setup.leaf, caFile: setup.configured), setup.server)
            #expect(refused.status == 1, "\(refused.stdout)\(refused.stderr)")
            #expect(refused.stdout.contains("untrusted: TLS verification for 'localhost' failed"))
        }
    }
}
