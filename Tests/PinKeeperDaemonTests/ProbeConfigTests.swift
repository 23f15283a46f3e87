import Foundation
import Testing
@testable import PinKeeperDaemon

/// `probe`, `probe_interval`, `probe_ca_file` and `probe_connect_to`: in `[defaults]` and per store.
@Suite("Configuration: probe keys")
struct ProbeConfigTests {
    private func load(_ main: String, files: [String: String] = [:]) throws -> ConfigFixture.Loaded {
        try ConfigTests.load(main, files: files)
    }

    @Test("targets with and without ports, IPv6, the default interval, no CA file, no connect-to")
    func targets() throws {
        let config = try load(ConfigTests.store("banking", #"probe = ["api.example.com", "pay.example.com:8443", "[2001:db8::1]:4443"]"#))
            .config()
        let probe = try #require(config.store("banking")).probe
        #expect(probe.targets.map(\.id) == ["api.example.com:443", "pay.example.com:8443", "[2001:db8::1]:4443"])
        #expect(probe.targets.map(\.name) == ["api.example.com", "pay.example.com", "2001:db8::1"])
        #expect(probe.targets.allSatisfy { $0.connectTo == nil })
        #expect(probe.interval == 3_600)
        #expect(probe.minRefresh == 300)
        #expect(probe.caFile == nil)
    }

    @Test("[defaults] gives every store its probes; a store's own key replaces the default")
    func defaults() throws {
        let main = """
            [defaults]
            probe = ["api.example.com"]
            probe_interval = "15m"
            probe_ca_file = "$DIR/probe-ca.pem"
            probe_connect_to = { "api.example.com:443" = "10.0.0.5" }
            min_probe_refresh = "2m"

            """ + ConfigTests.store("banking")
            + ConfigTests.store(
                "shop",
                """
                probe = ["shop.example.com:8443"]
                probe_interval = 7200
                min_probe_refresh = "30s"
                """)
        let config = try load(main, files: ["probe-ca.pem": "pem"]).config()
        let banking = try #require(config.store("banking")).probe
        #expect(
            banking.targets == [
                ProbeTarget(
                    endpoint: Endpoint(host: "api.example.com", port: 443),
                    connectTo: Endpoint(host: "10.0.0.5", port: 443))
            ])
        #expect(banking.interval == 900)
        #expect(banking.minRefresh == 120)
        #expect(banking.caFile?.hasSuffix("/probe-ca.pem") == true)
        let shop = try #require(config.store("shop")).probe
        // The defaults' connect-to names no target of this store: it simply does not apply.
        #expect(shop.targets == [ProbeTarget(endpoint: Endpoint(host: "shop.example.com", port: 8443))])
        #expect(shop.interval == 7_200)
        #expect(shop.minRefresh == 30)
        #expect(shop.caFile == banking.caFile)
    }

    @Test("probe_connect_to: the target's port unless the address gives one; IPv6 in brackets")
    func connectTo() throws {
        let config = try load(
            ConfigTests.store(
                "banking",
                """
                probe = ["api.example.com", "pay.example.com:8443"]
                probe_connect_to = { "api.example.com:443" = "[fd00::5]:9443", "pay.example.com:8443" = "internal.lan" }
                """)
        ).config()
        let targets = try #require(config.store("banking")).probe.targets
        #expect(targets.map { $0.connectTo?.description } == ["[fd00::5]:9443", "internal.lan:8443"])
    }

    static let invalid: [(String, String, String)] = [
        (#"probe = "api.example.com""#, "probe", "must be an array"),
        (#"probe = ["api.example.com", 7]"#, "probe", "entry 2 (not a string)"),
        (#"probe = ["https://api.example.com/"]"#, "probe", #"entry 1 ("https://api.example.com/")"#),
        (#"probe = ["api.example.com:0"]"#, "probe", "host name or address with an optional port"),
        (#"probe = ["api example.com"]"#, "probe", "host name or address"),
        (#"probe = ["api.example.com", "api.example.com:443"]"#, "probe", "lists api.example.com:443 twice"),
        ("probe_interval = \"5s\"", "probe_interval", "must be a duration from 10s to 365d"),
        ("probe_interval = \"often\"", "probe_interval", "must be a duration"),
        ("probe_ca_file = \"relative.pem\"", "probe_ca_file", "must be an absolute path"),
        ("probe_ca_file = \"/nonexistent/ca.pem\"", "probe_ca_file", "/nonexistent/ca.pem does not exist"),
        ("probe = [\"api.example.com\"]\nprobe_connect_to = \"10.0.0.5\"", "probe_connect_to", "must be a table"),
        (
            "probe = [\"api.example.com\"]\nprobe_connect_to = { \"api.example.com\" = 5 }", "probe_connect_to",
            "the value for \"api.example.com\" must be a string"
        ),
        (
            "probe = [\"api.example.com\"]\nprobe_connect_to = { \"api.example.com\" = \"a b\" }", "probe_connect_to",
            "the value for \"api.example.com\""
        ),
        // A typo must not silently probe the public address instead.
        (
            "probe = [\"api.example.com\"]\nprobe_connect_to = { \"api.exmaple.com:443\" = \"10.0.0.5\" }", "probe_connect_to",
            "\"api.exmaple.com:443\" names no probe target of this store; its probe targets are api.example.com:443"
        ),
        (
            "probe = [\"api.example.com:8443\"]\nprobe_connect_to = { \"api.example.com\" = \"10.0.0.5\" }", "probe_connect_to",
            "\"api.example.com:443\" names no probe target"
        ),
        ("probe_connect_to = { \"api.example.com\" = \"10.0.0.5\" }", "probe_connect_to", "the store has no probe targets"),
    ]

    @Test("each bad value is one line naming the file, the store and the key", arguments: invalid)
    func invalidStoreValues(line: String, key: String, fragment: String) throws {
        try ConfigTests.expectError(try load(ConfigTests.store("banking", line)), store: "banking", key: key, fragment)
    }

    @Test("[defaults] values are checked too, and name the key under defaults")
    func invalidDefaults() throws {
        let loaded = try load("[defaults]\nprobe = [\"api.example.com:http\"]\n" + ConfigTests.store("banking"))
        try ConfigTests.expectError(loaded, store: nil, key: "probe", "entry 1")
        let typo = try load("[defaults]\nprobe_intervall = \"1h\"\n")
        try ConfigTests.expectError(typo, store: nil, key: "defaults.probe_intervall", "did you mean 'probe_interval'?")
    }

    @Test("Endpoint.parse: the forms operators write, and what it refuses")
    func endpoints() {
        #expect(Endpoint.parse("api.example.com") == Endpoint(host: "api.example.com", port: 443))
        #expect(Endpoint.parse("api.example.com:8443") == Endpoint(host: "api.example.com", port: 8443))
        #expect(Endpoint.parse("127.0.0.1:1") == Endpoint(host: "127.0.0.1", port: 1))
        #expect(Endpoint.parse("::1") == Endpoint(host: "::1", port: 443))
        #expect(Endpoint.parse("[::1]:8443") == Endpoint(host: "::1", port: 8443))
        #expect(Endpoint.parse("api.example.com", defaultPort: 8443)?.port == 8443)
        for bad in [
            "", ":443", "host:", "host:65536", "[::1", "[api.example.com]:443", "[::1]8443", "a/b", "-x.example.com",
            "user@host", String(repeating: "a", count: 254),
        ] {
            #expect(Endpoint.parse(bad) == nil, "\(bad)")
        }
    }
}
