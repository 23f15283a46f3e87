import Foundation
import PinKeeper
@testable import PinKeeperDaemon
import TestSupport
import Testing

/// `pinkeeper update` through a real HTTP proxy (tinyproxy) on loopback: the configured proxy,
/// the environment's, `proxy = ""`, and proxies that refuse. The proxy's own log proves which
/// fetches went through it.
@Suite("Proxies: fetches through tinyproxy on loopback")
struct ProxyTests {
    static let password = "s3cret-Pw"
    static let credentials = "alice:\(password)"

    /// Runs the real binary with no proxy variables but the ones given.
    private func pinkeeper(_ arguments: [String], environment: [String: String] = [:]) -> ChildProcess.Result {
        var env = ProcessInfo.processInfo.environment
        for name in ["http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY", "no_proxy", "NO_PROXY"] {
            env[name] = nil
        }
        env.merge(environment) { $1 }
        return ChildProcess.run(TestEnvironment.binary, arguments, environment: env, timeout: 30)
    }

    /// One store `a` at `url`; `defaults` and `store` are extra TOML lines.
    private func writeConfig(
        _ sandbox: Sandbox, url: String, defaults: String = "", store: String = "",
        caFile: String = TestEnvironment.certificate("ca.pem")
    ) throws -> String {
        let text = """
            cache_directory = "\(sandbox.cache.path)"
            state_directory = "\(sandbox.state.path)"
            \(Sandbox.userLine)
            [defaults]
            \(defaults)
            [stores.a]
            url = "\(url)"
            public_key = "\(TestEnvironment.publicKey())"
            ca_file = "\(caFile)"
            request_timeout = "10s"
            \(store)

            """
        let path = sandbox.root.appendingPathComponent("pinkeeper.toml").path
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    private func route(_ server: FixtureServer) throws {
        try server.route("a", Lists.route(entries: [Lists.entry("api.example.com", 1)]))
    }

    @Test(
        """
        proxy in [defaults]: the list comes through the CONNECT tunnel with Basic auth\
        ; the environment's proxy and no_proxy change nothing; the password is never shown
        """
    )
    func configuredProxy() throws {
        let server = try FixtureServer(), sandbox = try Sandbox()
        let proxy = try ProxyServer(allowPorts: [server.port], credentials: ("alice", Self.password))
        try route(server)
        let config = try writeConfig(sandbox, url: server.url("a"), defaults: "proxy = \"\(proxy.url(credentials: Self.credentials))\"")
        // Followed, either variable would take the fetch away from the configured proxy.
        let environment = ["https_proxy": "http://127.0.0.1:\(try ProxyServer.freePort())", "no_proxy": "127.0.0.1,localhost"]

        let update = pinkeeper(["update", "--config", config], environment: environment)

        #expect(update.status == 0, "\(update.stdout)\(update.stderr)")
        #expect(update.stdout.hasPrefix("a ok pins=1"), "\(update.stdout)")
        #expect(proxy.connectTargets() == ["127.0.0.1:\(server.port)"])
        #expect(server.requests("a").count == 1)
        let check = pinkeeper(["check-config", "--config", config])
        #expect(check.status == 0)
        #expect(check.stdout.contains("proxy http://***@127.0.0.1:\(proxy.port))"), "\(check.stdout)")
        for output in [update, check] {
            #expect(!(output.stdout + output.stderr).contains(Self.password))
        }
    }

    @Test("TLS is verified end to end through the tunnel: the store's ca_file still decides")
    func tlsThroughTunnel() throws {
        let server = try FixtureServer(), sandbox = try Sandbox(), proxy = try ProxyServer(allowPorts: [server.port])
        let pki = TestPKI("proxy-tls")
        pki.ca("unrelated")
        try route(server)
        let config = try writeConfig(sandbox, url: server.url("a"), store: "proxy = \"\(proxy.url())\"", caFile: pki.pem("unrelated"))

        let result = pinkeeper(["update", "--config", config])

        #expect(result.status == 1)
        #expect(result.stdout.hasPrefix("a network-error pins=0"), "\(result.stdout)")
        #expect(result.stdout.contains("TLS verification failed; check ca_file"), "\(result.stdout)")
        #expect(result.stdout.contains("(through the proxy http://127.0.0.1:\(proxy.port))"), "\(result.stdout)")
        #expect(proxy.connectTargets() == ["127.0.0.1:\(server.port)"])
        #expect(server.requests("a").isEmpty)
        #expect(sandbox.cacheBytes("a") == nil)
    }

    @Test("without the key, libcurl's https_proxy applies, and its no_proxy exempts a host")
    func environmentProxy() throws {
        let server = try FixtureServer(), sandbox = try Sandbox(), proxy = try ProxyServer(allowPorts: [server.port])
        try route(server)
        let config = try writeConfig(sandbox, url: server.url("a"))

        let proxied = pinkeeper(["update", "--config", config], environment: ["https_proxy": proxy.url()])
        #expect(proxied.status == 0, "\(proxied.stdout)\(proxied.stderr)")
        #expect(proxy.connectTargets() == ["127.0.0.1:\(server.port)"])

        let exempt = pinkeeper(
            ["update", "--config", config, "--force"],
            environment: ["https_proxy": proxy.url(), "no_proxy": "127.0.0.1"])
        #expect(exempt.status == 0, "\(exempt.stdout)\(exempt.stderr)")
        #expect(proxy.connectTargets().count == 1)
        #expect(server.requests("a").count == 2)
    }

    @Test("proxy = \"\" connects directly although the environment names a proxy that would refuse")
    func emptyMeansDirect() throws {
        let server = try FixtureServer(), sandbox = try Sandbox()
        let refusing = try ProxyServer(allowPorts: [server.port == 1 ? 2 : 1])
        try route(server)
        let environment = ["https_proxy": refusing.url(), "HTTPS_PROXY": refusing.url(), "all_proxy": refusing.url()]

        let direct = pinkeeper(
            ["update", "--config", try writeConfig(sandbox, url: server.url("a"), store: "proxy = \"\"")],
            environment: environment)
        #expect(direct.status == 0, "\(direct.stdout)\(direct.stderr)")
        #expect(refusing.connectTargets().isEmpty)

        // The control: without the key, the same environment sends the fetch to that proxy.
        let viaEnvironment = pinkeeper(
            ["update", "--config", try writeConfig(sandbox, url: server.url("a")), "--force"],
            environment: environment)
        #expect(viaEnvironment.status == 1)
        #expect(
            viaEnvironment.stdout.contains(
                "the proxy http://127.0.0.1:\(refusing.port) from $https_proxy refused the CONNECT tunnel with HTTP 403"),
            "\(viaEnvironment.stdout)")
        #expect(refusing.connectTargets() == ["127.0.0.1:\(server.port)"])
    }

    enum Refusal: String, CaseIterable, Sendable {
        case forbiddenPort, wrongPassword, closedPort
    }

    @Test(
        "a proxy that refuses: network-error naming the store and the proxy (redacted); the cache stays; a retry is scheduled",
        arguments: Refusal.allCases)
    func refusingProxy(_ refusal: Refusal) throws {
        let server = try FixtureServer(), sandbox = try Sandbox()
        try route(server)
        let first = pinkeeper(["update", "--config", try writeConfig(sandbox, url: server.url("a"), store: "proxy = \"\"")])
        #expect(first.status == 0, "\(first.stdout)\(first.stderr)")
        let published = try #require(sandbox.cacheBytes("a"))

        var proxy: ProxyServer?
        let port: Int, expected: String
        switch refusal {
        case .forbiddenPort:
            proxy = try ProxyServer(allowPorts: [server.port == 1 ? 2 : 1], credentials: ("alice", Self.password))
            port = proxy!.port
            expected = "the proxy http://***@127.0.0.1:\(port) refused the CONNECT tunnel with HTTP 403"
        case .wrongPassword:
            proxy = try ProxyServer(allowPorts: [server.port], credentials: ("alice", "another-password"))
            port = proxy!.port
            // tinyproxy answers wrong credentials with 401 (a missing Proxy-Authorization gets 407).
            expected =
                "the proxy http://***@127.0.0.1:\(port) refused the CONNECT tunnel with HTTP 401: check the proxy's user name and password"
        case .closedPort:
            port = try ProxyServer.freePort()
            expected = "cannot connect to the proxy http://***@127.0.0.1:\(port)"
        }
        let proxyURL = "http://\(Self.credentials)@127.0.0.1:\(port)"
        let config = try writeConfig(sandbox, url: server.url("a"), store: "proxy = \"\(proxyURL)\"")
        let before = Int64(Date().timeIntervalSince1970)

        let result = pinkeeper(["update", "--config", config, "--force"])

        #expect(result.status == 1)
        #expect(result.stdout.hasPrefix("a network-error pins=1"), "\(result.stdout)")
        #expect(result.stdout.contains(expected), "\(result.stdout)")
        #expect(sandbox.cacheBytes("a") == published)
        #expect(server.requests("a").count == 1)
        if let proxy, refusal == .forbiddenPort { #expect(proxy.connectTargets() == ["127.0.0.1:\(server.port)"]) }
        let state = sandbox.savedState("a")
        #expect(state.consecutiveFailures == 1)
        #expect(state.lastResult == .networkError)
        let retry = try #require(state.retryAt)
        #expect(retry > before && retry <= before + 3_600)

        let status = pinkeeper(["status", "--config", config])
        #expect(status.stdout.contains("network-error"), "\(status.stdout)")
        #expect(status.stdout.contains("127.0.0.1:\(port)"), "\(status.stdout)")
        for output in [result, status] {
            #expect(!(output.stdout + output.stderr).contains(Self.password))
        }
    }

    @Test("an unsupported proxy scheme: exit 78, one line naming file, store and key")
    func unsupportedScheme() throws {
        let sandbox = try Sandbox()
        let config = try writeConfig(
            sandbox, url: "https://127.0.0.1:1/a", store: "proxy = \"socks5://\(Self.credentials)@127.0.0.1:1080\"")
        for command in ["update", "check-config"] {
            let result = pinkeeper([command, "--config", config])
            #expect(result.status == 78)
            let lines = result.stderr.split(separator: "\n")
            #expect(lines.count == 1, "\(result.stderr)")
            #expect(
                lines.first?.contains("\(config): store 'a': key 'proxy': only http:// proxies are supported") == true, "\(result.stderr)")
            #expect(!result.stderr.contains(Self.password))
        }
    }
}
