import Foundation
import PinKeeper
@testable import PinKeeperDaemon
import TestSupport
import Testing

/// The stores of a pass on one server share connections and TLS sessions (`CurlDriver`), but
/// only between transfers with the same `ca_file` and proxy: trust is never carried over from
/// a transfer verified under other settings.
@Suite("Connection and TLS session reuse")
struct ConnectionReuseTests {
    /// A linger of its own keeps these tests' drivers apart from other suites', and long enough
    /// that a test task starved by a busy machine between two fetches still finds the connection.
    private static let linger: Duration = .seconds(600)

    private func fetch(
        _ url: String, caFile: String? = TestEnvironment.certificate("ca.pem"),
        proxy: ProxySetting = .direct, linger: Duration = Self.linger
    ) async -> Result<HTTPResponse, UpdateFailure> {
        let fetcher = CurlFetcher(userAgent: PinKeeperVersion.userAgent, linger: linger)
        do {
            return .success(try await fetcher.fetch(HTTPRequest(url: url, caFile: caFile, timeout: 10, proxy: proxy)))
        } catch {
            return .failure(error)
        }
    }

    private func serve(_ server: FixtureServer, _ routes: [String]) throws {
        for route in routes { try server.route(route, ["mode": "static", "fingerprints": []]) }
    }

    /// The test CA under a path of its own.
    private func copyOfCA() throws -> URL {
        let copy = TestEnvironment.temporaryDirectory("ca-copy").appendingPathComponent("ca.pem")
        try FileManager.default.copyItem(atPath: TestEnvironment.certificate("ca.pem"), toPath: copy.path)
        return copy
    }

    /// The TLS connection each route's request came on.
    private func connections(_ server: FixtureServer, _ routes: [String]) -> [Int] {
        routes.map { route in server.requests(route).first?.connection ?? -1 }
    }

    @Test("consecutive fetches from one server reuse its connection")
    func consecutiveFetchesReuse() async throws {
        let server = try FixtureServer(keepAlive: true)
        try serve(server, ["a", "b", "c"])
        for route in ["a", "b", "c"] {
            #expect((try? await fetch(server.url(route)).get())?.status == 200)
        }
        #expect(connections(server, ["a", "b", "c"]) == [1, 1, 1])
    }

    @Test("a new connection to the same server resumes the TLS session of an earlier fetch")
    func newConnectionResumesSession() async throws {
        let server = try FixtureServer()  // closes every connection
        try serve(server, ["a", "b"])
        for route in ["a", "b"] {
            #expect((try? await fetch(server.url(route)).get())?.status == 200)
        }
        let requests = ["a", "b"].map { server.requests($0).first }
        #expect(requests.map { $0?.connection } == [1, 2])
        #expect(requests.map { $0?.tlsResumed } == [false, true])
    }

    @Test("a store with another ca_file never gets a connection or TLS session verified under the first")
    func otherCAFileIsolated() async throws {
        let server = try FixtureServer(keepAlive: true)
        try serve(server, ["trusted", "wrong", "copy"])
        #expect((try? await fetch(server.url("trusted")).get())?.status == 200)

        // A ca_file that does not hold the server's CA fails, although a verified connection is open.
        switch await fetch(server.url("wrong"), caFile: TestEnvironment.certificate("untrusted.pem")) {
        case .success(let response): Issue.record("fetched with HTTP \(response.status) under a ca_file without the server's CA")
        case .failure(let failure): #expect(failure.reason.contains("TLS verification failed; check ca_file"), "\(failure.reason)")
        }
        #expect(server.requests("wrong").isEmpty)

        // The same CA under another path is another setting: a connection and handshake of its own.
        let copy = try copyOfCA()
        defer { try? FileManager.default.removeItem(at: copy.deletingLastPathComponent()) }
        #expect((try? await fetch(server.url("copy"), caFile: copy.path).get())?.status == 200)
        let copied = server.requests("copy").first
        #expect(copied?.connection != server.requests("trusted").first?.connection)
        #expect(copied?.tlsResumed == false)
    }

    @Test("a store with another proxy setting gets a connection of its own")
    func otherProxySettingIsolated() async throws {
        let server = try FixtureServer(keepAlive: true)
        try serve(server, ["direct", "environment"])
        #expect((try? await fetch(server.url("direct"), proxy: .direct).get())?.status == 200)
        // No proxy variable is set for the tests' requests to 127.0.0.1 (no_proxy covers loopback
        // otherwise); what matters is that the setting differs.
        #expect((try? await fetch(server.url("environment"), proxy: .environment).get())?.status == 200)
        let numbers = connections(server, ["direct", "environment"])
        #expect(numbers[0] != numbers[1], "\(numbers)")
    }

    @Test("an idle driver closes its connections: the next fetch after the linger opens a new one")
    func idleDriverCloses() async throws {
        let server = try FixtureServer(keepAlive: true)
        try serve(server, ["before", "after"])
        // A one-second linger of its own: a driver no other test keeps busy.
        #expect((try? await fetch(server.url("before"), linger: .seconds(1)).get())?.status == 200)
        try await Task.sleep(for: .seconds(2))
        #expect((try? await fetch(server.url("after"), linger: .seconds(1)).get())?.status == 200)
        let numbers = connections(server, ["before", "after"])
        #expect(numbers[0] != numbers[1], "\(numbers)")
    }

    @Test("concurrent fetches all complete, and a cancelled one ends at once without disturbing the others")
    func concurrentAndCancelled() async throws {
        let server = try FixtureServer(keepAlive: true)
        let routes = (0..<12).map { "s\($0)" }
        try serve(server, routes)
        try server.route("slow", ["mode": "static", "fingerprints": [], "delay": 30])
        let slow = Task { await self.fetch(server.url("slow")) }
        let statuses = await withTaskGroup(of: Int?.self) { group in
            for route in routes { group.addTask { try? await fetch(server.url(route)).get().status } }
            return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(statuses == [Int?](repeating: 200, count: routes.count))
        let started = ContinuousClock.now
        slow.cancel()
        if case .failure(let failure) = await slow.value {
            #expect(failure.reason == "transfer cancelled")
        } else {
            Issue.record("the cancelled fetch succeeded")
        }
        // The slow route holds its answer 30 s: anything well below shows the cancellation was
        // acted on (a loaded suite has taken 9.4 s here).
        #expect(ContinuousClock.now - started < .seconds(20))
    }
}
