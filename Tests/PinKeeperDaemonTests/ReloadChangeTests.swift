import TestSupport
import Testing
@testable import PinKeeperDaemon

/// What a reload counts as a changed store (`StoreConfig`'s derived `==`): every key a store
/// accepts, except those that change nothing a fetch does. A key the parser learns without a
/// sample here fails the test, so that its effect on a reload is decided, not left to chance.
@Suite("Which store keys make a reload fetch the store again")
struct ReloadChangeTests {
    /// The store every sample changes one key of.
    static let base: [String: String] = [
        "url": #"url = "https://mus.example.com/app/init?appName=banking""#,
        "public_key": "public_key = \"\(ConfigTests.keyB)\"",
        "probe": #"probe = ["api.example.com"]"#,
    ]

    /// For every key a store accepts: a line that sets it to something else than `base` does.
    static let samples: [String: String] = [
        "url": #"url = "https://mus.example.com/app/init?appName=shop""#,
        "public_key": "public_key = [\"\(ConfigTests.keyB)\", \"\(Vectors.keyABase64)\"]",
        "mode": #"mode = "static""#,
        "expected_common_names": #"expected_common_names = ["api.example.com"]"#,
        "fallback_file": #"fallback_file = "$DIR/fallback.json""#,
        "ca_file": #"ca_file = "$DIR/ca.pem""#,
        "periodic_update_interval": #"periodic_update_interval = "1d""#,
        "expiration_update_threshold": #"expiration_update_threshold = "1d""#,
        "request_timeout": #"request_timeout = "5s""#,
        "max_response_size": #"max_response_size = "2MiB""#,
        "retry_min": #"retry_min = "1m""#,
        "retry_max": #"retry_max = "2h""#,
        "proxy": #"proxy = """#,
        "authoritative": "authoritative = true",
        "on_change": #"on_change = ["/bin/true"]"#,
        "hook_timeout": "hook_timeout = 9",
        "probe": #"probe = ["pay.example.com"]"#,
        "probe_interval": #"probe_interval = "2h""#,
        "probe_ca_file": #"probe_ca_file = "$DIR/ca.pem""#,
        "probe_connect_to": #"probe_connect_to = { "api.example.com" = "10.0.0.5" }"#,
        "min_probe_refresh": #"min_probe_refresh = "1m""#,
    ]

    /// Keys whose settings are `FetchNeutral`: a hook runs after a publish, probes only read the
    /// published pins (and `ProbeSchedule` probes again when they change).
    static let fetchNeutral: Set<String> = Set(HookKeys.all).union(ProbeKeys.all)

    static func store(setting key: String?) throws -> StoreConfig {
        var lines = base
        if let key { lines[key] = samples[key] }
        let table = "[stores.banking]\n" + lines.keys.sorted().compactMap { lines[$0] }.joined(separator: "\n") + "\n"
        let files = ["fallback.json": ConfigTests.fallbackList, "ca.pem": "pem"]
        return try #require(try ConfigTests.load(table, files: files).config().stores.first)
    }

    @Test(
        "each store key: a changed value makes the store differ unless the key is fetch-neutral",
        arguments: StoreParser.keys)
    func storeKeyCountsForAReload(key: String) throws {
        try #require(
            Self.samples[key] != nil,
            "no sample for the store key '\(key)': add one, and decide whether a change must make a reload fetch the store")
        let before = try Self.store(setting: nil), after = try Self.store(setting: key)
        #expect(String(describing: after) != String(describing: before), "the sample for '\(key)' changes nothing")
        #expect((after != before) == !Self.fetchNeutral.contains(key))
    }

    @Test("a store moved to another file is the same store for a reload")
    func whereAStoreIsWrittenDoesNotCount() throws {
        let inMain = try ConfigTests.load(ConfigTests.store("banking")).config().stores[0]
        let inDropIn = try ConfigTests.load("", dropIns: ["banking.toml": ConfigTests.store("banking")]).config().stores[0]
        #expect(inMain.definedIn != inDropIn.definedIn)
        #expect(inMain == inDropIn)
    }

    @Test("public keys are equal by their point, not as objects")
    func publicKeysCompareByPoint() throws {
        let key = try Vectors.keyA()
        #expect(key == (try PublicKey(base64: Vectors.keyABase64)))
        #expect(key != (try Vectors.keyB()))
    }
}
