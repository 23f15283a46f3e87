import Foundation
import Testing
@testable import PinKeeperDaemon

/// The `proxy` key: inherited from `[defaults]`, overridden per store, `""` for none, and
/// anything but an http:// URL with a host and a port refused at load, without echoing credentials.
@Suite("Configuration: proxy")
struct ProxyConfigTests {
    private func load(defaults: String? = nil, store extra: String = "") throws -> ConfigFixture.Loaded {
        let main = (defaults.map { "[defaults]\n\($0)\n" } ?? "") + ConfigTests.store("banking", extra)
        return try ConfigFixture(main: main).load()
    }

    @Test("absent: the environment decides; [defaults] applies to stores; a store overrides it; \"\" means none")
    func inheritance() throws {
        #expect(try load().config().stores[0].policy.proxy == .environment)
        let inherited = try load(defaults: "proxy = \"http://proxy.example:3128\"").config().stores[0]
        #expect(inherited.policy.proxy == .http("http://proxy.example:3128"))
        let direct = try load(defaults: "proxy = \"http://proxy.example:3128\"", store: "proxy = \"\"").config().stores[0]
        #expect(direct.policy.proxy == .direct)
        let own = try load(store: "proxy = \"http://user:pa%40ss@[::1]:8080/\"").config().stores[0]
        #expect(own.policy.proxy == .http("http://user:pa%40ss@[::1]:8080/"))
    }

    @Test("a changed proxy is a changed store for a reload")
    func reloadSeesChange() throws {
        let before = try load().config().stores[0]
        let after = try load(store: "proxy = \"\"").config().stores[0]
        #expect(after != before)
    }

    @Test(
        "rejected values: one line naming file, store and key, without the credentials",
        arguments: [
            ("\"socks5://alice:s3cret@proxy.example:1080\"", "only http:// proxies are supported"),
            ("\"https://alice:s3cret@proxy.example:443\"", "only http:// proxies are supported"),
            ("\"proxy.example:3128\"", "must be \"\" or an http:// URL"),
            ("\"http://alice:s3cret@proxy.example\"", "must name the proxy's port"),
            ("\"http://alice:s3cret@proxy.example:0\"", "must name the proxy's port"),
            ("\"http://alice:s3cret@:3128\"", "is not a valid URL"),
            ("\"http://alice:s3cret@proxy.example:3128/path\"", "must not have a path"),
            ("\"http://alice:s3cret@proxy.example:3128?x=1\"", "must not have a path"),
            ("\"http://alice:s3 cret@proxy.example:3128\"", "must not contain spaces"),
            ("3128", "must be a string"),
        ])
    func rejected(value: String, problem: String) throws {
        for (defaults, store) in [(nil, "proxy = \(value)"), ("proxy = \(value)", "")] {
            let loaded = try load(defaults: defaults, store: store)
            let error = try #require(loaded.error, "\(value) was accepted")
            #expect(error.key == "proxy")
            #expect(error.store == (defaults == nil ? "banking" : nil))
            #expect(error.file == loaded.mainPath)
            #expect(error.description.contains(problem), "\(error)")
            #expect(!error.description.contains("s3"), "\(error)")
        }
    }

    @Test("redaction hides user and password, and only them")
    func redaction() {
        #expect(ProxySetting.redact("http://alice:s3cret@proxy.example:3128") == "http://***@proxy.example:3128")
        #expect(ProxySetting.redact("http://a@b:c@proxy.example:3128/") == "http://***@proxy.example:3128/")
        #expect(ProxySetting.redact("alice:s3cret@proxy.example:3128") == "***@proxy.example:3128")
        #expect(ProxySetting.redact("http://proxy.example:3128") == "http://proxy.example:3128")
        #expect(ProxySetting.redact("http://proxy.example:3128/?u=a@b") == "http://proxy.example:3128/?u=a@b")
        let setting = ProxySetting.http("http://alice:s3cret@proxy.example:3128")
        #expect(setting.redacted == "http://***@proxy.example:3128")
        var policy = UpdatePolicy()
        policy.proxy = setting
        #expect(!"\(setting) \(String(reflecting: setting)) \(policy) \(String(reflecting: policy))".contains("s3cret"))
        let scrubbed = ProxySetting.http("http://alice:s3cret@p:1").scrub(
            "x alice:s3cret y bob:pw z", environment: ["https_proxy": "http://bob:pw@q:2"])
        #expect(scrubbed == "x *** y *** z")
        // A combining mark after the password makes it part of another Character: still scrubbed.
        let marked = ProxySetting.http("http://alice:s3cret@p:1").scrub("x alice:s3cret\u{301} y", environment: [:])
        #expect(marked == "x ***\u{301} y")
        // The same mark on the "@" itself: the userinfo is still found (libcurl splits by bytes).
        let combined = "http://alice:s3cret@\u{301}proxy.example:3128"
        #expect(ProxySetting.redact(combined) == "http://***@\u{301}proxy.example:3128")
        #expect(ProxySetting.credentials(in: combined) == "alice:s3cret")
        #expect(!ProxySetting.http(combined).redacted.contains("s3cret"))
    }
}
