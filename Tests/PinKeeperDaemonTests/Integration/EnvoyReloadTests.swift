import Foundation
import PinKeeper
@testable import PinKeeperDaemon
import TestSupport
import Testing

/// Envoy keeps the secret it read last from a directory nobody writes any more: a reload that
/// moves `envoy_sds_directory`, or removes it, leaves the old directory's secrets matching no
/// certificate, never the pins of the day the directory was left. The daemon runs in this process
/// (`InProcessDaemon`) against the loopback server.
@Suite("A reload that moves or removes envoy_sds_directory")
struct EnvoyReloadTests {
    let server: FixtureServer
    let sandbox: Sandbox

    init() throws {
        server = try FixtureServer()
        sandbox = try Sandbox()
        try server.route("a", Lists.route(entries: [Lists.entry("a.example.com", 1)]))
    }

    private func secret(in directory: String) -> String? {
        try? String(contentsOfFile: directory + "/a/a.example.com.yaml", encoding: .utf8)
    }

    private var retired: String { EnvoySecrets.render(name: "a.example.com", hashes: [EnvoySecrets.neverMatches]) }

    @Test("the old directory's secrets match nothing; the new one holds the pins", .timeLimit(.minutes(2)))
    func movedThenRemoved() async throws {
        let first = sandbox.root.appendingPathComponent("envoy-1").path, second = sandbox.root.appendingPathComponent("envoy-2").path
        for directory in [first, second] { try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false) }
        var configuration = sandbox.configuration([try sandbox.store("a", url: server.url("a"))])
        configuration.envoySDSDirectory = first
        let sandbox = self.sandbox, fetcher = GatedFetcher(holding: [])
        let daemon = InProcessDaemon(configuration, logger: sandbox.log.logger) { configuration in
            var updater = sandbox.updater(fetcher: fetcher)
            updater.envoy = configuration.envoySDSDirectory.map {
                let writer = EnvoySecretWriter(directory: $0, logger: sandbox.log.logger)
                return EnvoySecretSync(writer: writer, cacheDirectory: configuration.cacheDirectory)
            }
            return updater
        }
        #expect(await eventually(timeout: 30) { secret(in: first) != nil })
        let live = try #require(secret(in: first))
        #expect(live != retired)

        configuration.envoySDSDirectory = second
        daemon.setConfiguration(configuration)
        daemon.send(.reload)
        #expect(await eventually(timeout: 30) { secret(in: second) == live && secret(in: first) == retired }, "\(sandbox.log.all)")

        configuration.envoySDSDirectory = nil
        daemon.setConfiguration(configuration)
        daemon.send(.reload)
        #expect(await eventually(timeout: 30) { secret(in: second) == retired })
        await daemon.stop()
        let notices = sandbox.log.all.filter { $0.message.hasPrefix("envoy_sds_directory changed") }.compactMap { $0.metadata["directory"] }
        #expect(notices == [first, second])
    }
}
