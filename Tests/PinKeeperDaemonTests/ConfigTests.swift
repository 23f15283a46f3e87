import Foundation
import TestSupport
import Testing
@testable import PinKeeperDaemon
import PinKeeper

/// Writes a configuration tree into a fresh temporary directory, loads it and removes the
/// directory again. `$DIR` in any text stands for that directory.
struct ConfigFixture {
    var main: String
    var dropIns: [String: String] = [:]
    /// Other files (fallback lists, CA files), relative to the directory; `nil` content = raw bytes below.
    var files: [String: String] = [:]
    var rawMain: Data?
    var environment: [String: String] = [:]
    /// `run --watch-configuration`.
    var watchByDefault = false

    struct Loaded {
        var result: Result<Configuration, ConfigError>
        var dir: String
        var mainPath: String { dir + "/pinkeeper.toml" }
        func dropIn(_ name: String) -> String { dir + "/stores.d/" + name }
        var error: ConfigError? {
            if case .failure(let error) = result { return error }
            return nil
        }
        func config() throws -> Configuration { try result.get() }
    }

    func load() throws -> Loaded {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("pinkeeper-config-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: dir) }
        func write(_ name: String, _ data: Data) throws {
            let url = URL(fileURLWithPath: dir + "/" + name)
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try data.write(to: url)
        }
        func text(_ content: String) -> Data { Data(content.replacingOccurrences(of: "$DIR", with: dir).utf8) }
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        for (name, content) in files { try write(name, text(content)) }
        for (name, content) in dropIns { try write("stores.d/" + name, text(content)) }
        try write("pinkeeper.toml", rawMain ?? text(main))
        let result = Result { () throws(ConfigError) in
            try ConfigLoader.load(path: dir + "/pinkeeper.toml", environment: environment, watchByDefault: watchByDefault)
        }
        return Loaded(result: result, dir: dir)
    }
}

@Suite("Configuration loading")
struct ConfigTests {
    static let keyB = (try? Vectors.keyBBase64()) ?? "key-B.public.x963.b64 is missing"

    /// A `[stores.ID]` table; pass nil to leave `url` or `public_key` out.
    static func store(
        _ id: String = "banking", url: String? = "\"https://mus.example.com/app/init?appName=banking\"",
        publicKey: String? = "\"\(keyB)\"", _ extra: String = ""
    ) -> String {
        var lines = ["[stores.\(id)]"]
        if let url { lines.append("url = \(url)") }
        if let publicKey { lines.append("public_key = \(publicKey)") }
        if !extra.isEmpty { lines.append(extra) }
        return lines.joined(separator: "\n") + "\n"
    }

    static func load(
        _ main: String, dropIns: [String: String] = [:], files: [String: String] = [:],
        environment: [String: String] = [:]
    ) throws -> ConfigFixture.Loaded {
        try ConfigFixture(main: main, dropIns: dropIns, files: files, environment: environment).load()
    }

    /// Checks the error's file, store and key fields, that its one-line description names them, and `fragment`.
    static func expectError(
        _ loaded: ConfigFixture.Loaded, file: String? = nil, store: String?, key: String?,
        _ fragment: String, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let error = try #require(loaded.error, "the configuration was accepted", sourceLocation: sourceLocation)
        let file = file ?? loaded.mainPath
        #expect(error.file == file, sourceLocation: sourceLocation)
        #expect(error.store == store, sourceLocation: sourceLocation)
        #expect(error.key == key, sourceLocation: sourceLocation)
        let line = error.description
        #expect(!line.contains("\n"), "not one line: \(line)", sourceLocation: sourceLocation)
        #expect(line.hasPrefix(file), sourceLocation: sourceLocation)
        #expect(line.contains(fragment), "\(line)", sourceLocation: sourceLocation)
        if let store { #expect(line.contains("store '\(store)'"), sourceLocation: sourceLocation) }
        if let key { #expect(line.contains("key '\(key)'"), sourceLocation: sourceLocation) }
    }

    // MARK: Valid configurations

    static let fullConfig = """
        cache_directory = "/srv/pinkeeper/cache"
        state_directory = "/srv/pinkeeper/state"
        metrics_file = "/srv/pinkeeper/metrics.prom"

        [defaults]
        periodic_update_interval = "36h"
        expiration_update_threshold = "7d"
        request_timeout = "90s"
        max_response_size = "512KiB"
        retry_min = "15m"
        retry_max = 7200

        """
        + store(
            "banking",
            """
            mode = "static"
            expected_common_names = ["api.example.com", "www.example.com"]
            fallback_file = "$DIR/banking-fallback.json"
            ca_file = "$DIR/internal-ca.pem"
            periodic_update_interval = 86400
            max_response_size = "1MiB"
            """) + store("shop", publicKey: "[\"\(Vectors.keyABase64)\", \"\(keyB)\"]")

    static let fallbackList =
        #"{"fingerprints":[{"name":"api.example.com","#
        + #""fingerprint":"AQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQE=","expires":4102444800,"signature":""}]}"#

    @Test func fullConfigurationWithDefaultsAndOverrides() throws {
        let loaded = try Self.load(Self.fullConfig, files: ["banking-fallback.json": Self.fallbackList, "internal-ca.pem": "pem"])
        let config = try loaded.config()
        #expect(config.cacheDirectory == "/srv/pinkeeper/cache")
        #expect(config.stateDirectory == "/srv/pinkeeper/state")
        #expect(config.metricsFile == "/srv/pinkeeper/metrics.prom")
        #expect(config.sources == [loaded.mainPath])
        #expect(config.stores.map(\.id) == ["banking", "shop"])

        let banking = try #require(config.store("banking"))
        #expect(banking.url == "https://mus.example.com/app/init?appName=banking")
        #expect(banking.mode == .static)
        #expect(banking.publicKeys.map(\.base64) == [Self.keyB])
        #expect(banking.expectedCommonNames == ["api.example.com", "www.example.com"])
        #expect(banking.fallbackFile == loaded.dir + "/banking-fallback.json")
        #expect(banking.caFile == loaded.dir + "/internal-ca.pem")
        #expect(banking.definedIn == loaded.mainPath)
        #expect(banking.policy.periodicUpdateInterval == 86_400)
        #expect(banking.policy.maxResponseSize == 1_048_576)
        #expect(banking.policy.expirationUpdateThreshold == 604_800)
        #expect(banking.policy.retryMin == 900)

        let shop = try #require(config.store("shop"))
        #expect(shop.mode == .challenge)
        #expect(shop.publicKeys.map(\.base64) == [Vectors.keyABase64, Self.keyB])
        #expect(shop.expectedCommonNames == nil)
        #expect(shop.fallbackFile == nil)
        #expect(shop.caFile == nil)
        var defaults = UpdatePolicy()
        defaults.periodicUpdateInterval = 129_600
        defaults.expirationUpdateThreshold = 604_800
        defaults.requestTimeout = 90
        defaults.maxResponseSize = 524_288
        defaults.retryMin = 900
        defaults.retryMax = 7_200
        #expect(shop.policy == defaults)
    }

    @Test func minimalStoreGetsTheWultraDefaults() throws {
        let config = try Self.load(Self.store()).config()
        #expect(config.stores.first?.policy == UpdatePolicy())
        #expect(UpdatePolicy().periodicUpdateInterval == 604_800)
        #expect(UpdatePolicy().expirationUpdateThreshold == 1_209_600)
    }

    @Test(
        arguments: [("\"90s\"", 90), ("\"15m\"", 900), ("\"36h\"", 129_600), ("\"7d\"", 604_800), ("\"2w\"", 1_209_600), ("45", 45)]
            as [(String, Int64)])
    func durationUnits(_ text: String, _ seconds: Int64) throws {
        let config = try Self.load("[defaults]\nperiodic_update_interval = \(text)\n" + Self.store()).config()
        #expect(config.stores.first?.policy.periodicUpdateInterval == seconds)
    }

    @Test(arguments: [("\"512KiB\"", 524_288), ("\"1MiB\"", 1_048_576), ("2048", 2_048)] as [(String, Int)])
    func sizeUnits(_ text: String, _ bytes: Int) throws {
        let config = try Self.load(Self.store("banking", "max_response_size = \(text)")).config()
        #expect(config.stores.first?.policy.maxResponseSize == bytes)
    }

    @Test func dropInsAreReadInLexicalOrderAndInheritDefaults() throws {
        let loaded = try Self.load(
            "[defaults]\nretry_min = \"1m\"\n" + Self.store("a"),
            dropIns: [
                "20-b.toml": Self.store("b"),
                "10-c.toml": Self.store("c", "mode = \"static\""),
                "notes.txt": "this is not toml",
                ".hidden.toml": "garbage = = =",
            ])
        let config = try loaded.config()
        #expect(config.sources == [loaded.mainPath, loaded.dropIn("10-c.toml"), loaded.dropIn("20-b.toml")])
        #expect(config.stores.map(\.id) == ["a", "b", "c"])
        #expect(config.store("c")?.definedIn == loaded.dropIn("10-c.toml"))
        #expect(config.store("c")?.mode == .static)
        #expect(config.store("b")?.policy.retryMin == 60)
    }

    @Test func laterDropInIsTheOneReportedAsDuplicate() throws {
        let loaded = try Self.load("", dropIns: ["10-x.toml": Self.store("dup"), "20-x.toml": Self.store("dup")])
        try Self.expectError(loaded, file: loaded.dropIn("20-x.toml"), store: "dup", key: nil, loaded.dropIn("10-x.toml"))
    }

    @Test func directoriesDefaultToSystemdEnvironment() throws {
        let loaded = try Self.load(
            Self.store(),
            environment: [
                "CACHE_DIRECTORY": "/var/cache/pinkeeper-env:/var/cache/second", "STATE_DIRECTORY": "/var/lib/pinkeeper-env",
            ])
        let config = try loaded.config()
        #expect(config.cacheDirectory == "/var/cache/pinkeeper-env")
        #expect(config.stateDirectory == "/var/lib/pinkeeper-env")
    }

    @Test func explicitDirectoriesBeatTheEnvironment() throws {
        let main = "cache_directory = \"/c\"\nstate_directory = \"/s\"\n" + Self.store()
        let config = try Self.load(main, environment: ["CACHE_DIRECTORY": "/env/c", "STATE_DIRECTORY": "/env/s"]).config()
        #expect(config.cacheDirectory == "/c")
        #expect(config.stateDirectory == "/s")
    }

    @Test func withoutEnvironmentTheDocumentedPathsAreUsed() throws {
        let config = try Self.load(Self.store(), environment: ["CACHE_DIRECTORY": "relative/path"]).config()
        #expect(config.cacheDirectory == "/var/cache/pinkeeper")
        #expect(config.stateDirectory == "/var/lib/pinkeeper")
    }

    @Test func storeIdOf64CharactersIsAccepted() throws {
        let id = "A" + String(repeating: "b.-_9", count: 12) + "xyz"
        try #require(id.count == 64)
        #expect(try Self.load(Self.store("\"\(id)\"")).config().stores.map(\.id) == [id])
    }

    // MARK: concurrency (daemon-wide)

    @Test func concurrencyDefaultsToSixtyFour() throws {
        #expect(try Self.load(Self.store()).config().concurrency == 64)
    }

    @Test(arguments: [1, 3, 64])
    func concurrencyIsRead(_ value: Int) throws {
        #expect(try Self.load("concurrency = \(value)\n" + Self.store()).config().concurrency == value)
    }

    @Test(arguments: ["0", "65", "-1", "\"4\"", "2.5", "true", "[4]"])
    func concurrencyOutOfRangeOrOfTheWrongType(_ value: String) throws {
        try Self.expectError(
            Self.load("concurrency = \(value)\n" + Self.store()), store: nil, key: "concurrency",
            "must be an integer from 1 to 64")
    }

    @Test func misspeltConcurrencySuggestsTheKey() throws {
        try Self.expectError(Self.load("concurency = 4\n"), store: nil, key: "concurency", "did you mean 'concurrency'?")
    }

    /// In TOML a key below `[defaults]` or `[stores.x]` belongs to that table.
    @Test func concurrencyBelowATableSaysWhereItBelongs() throws {
        try Self.expectError(
            Self.load("[defaults]\nconcurrency = 4\n"), store: nil, key: "defaults.concurrency",
            "daemon-wide: set it in the main file, above its first [table]")
        try Self.expectError(
            Self.load(Self.store("banking", "concurrency = 4")), store: "banking", key: "concurrency",
            "daemon-wide")
        let loaded = try Self.load("", dropIns: ["50-b.toml": "concurrency = 4\n" + Self.store("b")])
        try Self.expectError(loaded, file: loaded.dropIn("50-b.toml"), store: nil, key: "concurrency", "daemon-wide")
    }

    // MARK: log_format (daemon-wide)

    @Test func logFormatDefaultsToLogfmt() throws {
        #expect(try Self.load(Self.store()).config().logFormat == .logfmt)
    }

    @Test func logFormatIsRead() throws {
        #expect(try Self.load("log_format = \"json\"\n" + Self.store()).config().logFormat == .json)
        #expect(try Self.load("log_format = \"logfmt\"\n").config().logFormat == .logfmt)
    }

    @Test(arguments: ["\"text\"", "\"JSON\"", "\"\"", "1", "true"])
    func logFormatOtherValues(_ value: String) throws {
        try Self.expectError(Self.load("log_format = \(value)\n"), store: nil, key: "log_format", "must be \"logfmt\" or \"json\"")
    }

    @Test func logFormatInATableSaysWhereItBelongs() throws {
        try Self.expectError(Self.load("[defaults]\nlog_format = \"json\"\n"), store: nil, key: "defaults.log_format", "daemon-wide")
        let loaded = try Self.load("", dropIns: ["b.toml": "log_format = \"json\"\n"])
        try Self.expectError(loaded, file: loaded.dropIn("b.toml"), store: nil, key: "log_format", "daemon-wide")
    }

    // MARK: watch_configuration (daemon-wide)

    @Test func watchConfigurationDefaultsToFalse() throws {
        #expect(try Self.load(Self.store()).config().watchConfiguration == false)
    }

    @Test(arguments: [true, false])
    func watchConfigurationIsRead(_ value: Bool) throws {
        #expect(try Self.load("watch_configuration = \(value)\n" + Self.store()).config().watchConfiguration == value)
    }

    /// `run --watch-configuration` (the container image's CMD): an absent key means watching, a
    /// written key still decides, false included.
    @Test(arguments: [("", true), ("watch_configuration = false\n", false), ("watch_configuration = true\n", true)])
    func watchByDefaultYieldsToTheKey(_ line: String, _ watching: Bool) throws {
        let fixture = ConfigFixture(main: line + Self.store(), watchByDefault: true)
        #expect(try fixture.load().config().watchConfiguration == watching)
    }

    @Test(arguments: ["\"true\"", "1", "\"yes\""])
    func watchConfigurationIsABoolean(_ value: String) throws {
        try Self.expectError(Self.load("watch_configuration = \(value)\n"), store: nil, key: "watch_configuration", "must be true or false")
    }

    @Test func watchConfigurationInADropInSaysWhereItBelongs() throws {
        let loaded = try Self.load("", dropIns: ["b.toml": "watch_configuration = true\n"])
        try Self.expectError(loaded, file: loaded.dropIn("b.toml"), store: nil, key: "watch_configuration", "daemon-wide")
    }

    // MARK: Errors in the main file

    @Test func unknownTopLevelKeySuggestsTheNearestKey() throws {
        try Self.expectError(
            Self.load("cache_directroy = \"/x\"\n" + Self.store()), store: nil, key: "cache_directroy",
            "did you mean 'cache_directory'?")
    }

    @Test func unknownTopLevelKeyWithoutNeighbourListsAllowedKeys() throws {
        try Self.expectError(Self.load("colour = 1\n"), store: nil, key: "colour", "allowed keys: cache_directory")
    }

    @Test func unknownDefaultsKeyIsPrefixed() throws {
        try Self.expectError(
            Self.load("[defaults]\nretry_mni = \"1s\"\n"), store: nil, key: "defaults.retry_mni",
            "did you mean 'retry_min'?")
    }

    @Test func unknownStoreKey() throws {
        try Self.expectError(
            Self.load(Self.store("banking", "public_keys = []")), store: "banking", key: "public_keys",
            "did you mean 'public_key'?")
    }

    @Test func relativeCacheDirectory() throws {
        try Self.expectError(Self.load("cache_directory = \"cache\"\n"), store: nil, key: "cache_directory", "absolute path")
    }

    @Test func plainHTTPURLIsRejected() throws {
        try Self.expectError(
            Self.load(Self.store(url: "\"http://mus.example.com/app/init\"")), store: "banking",
            key: "url", "https://")
    }

    @Test func urlWithoutHostIsRejected() throws {
        try Self.expectError(Self.load(Self.store(url: "\"https:///list.json\"")), store: "banking", key: "url", "https://")
    }

    @Test(arguments: [
        "https://user:s3cret@mus.example.com/app/init", "https://s3cret@mus.example.com/app/init?appName=b",
        "https://user:s3cret@mus.example.com",
    ])
    func credentialsInURLAreRejectedWithoutEchoingThem(_ url: String) throws {
        let loaded = try Self.load(Self.store(url: "\"\(url)\""))
        try Self.expectError(loaded, store: "banking", key: "url", "must not carry credentials")
        #expect(loaded.error?.description.contains("s3cret") == false, "\(loaded.error!)")
    }

    /// A combining mark after the `@` (or after the `:`) joins it into one Character with the
    /// mark, which a search by Character does not find; libcurl splits the URL by bytes, so it
    /// would still take `user:s3cret` for credentials (and the old check echoed them in its error).
    @Test(arguments: [
        "https://user:s3cret@\u{301}mus.example.com/app/init", "https://s3cret@\u{301}mus.example.com",
        "https://user:s3cret\u{301}@mus.example.com/app/init", "https://user:\u{301}s3cret@\u{301}mus.example.com",
        "https://user\u{301}:s3cret@\u{20DD}mus.example.com/app/init?appName=b",
        "https://user:s3cret@\u{301}\u{301}mus.example.com:443",
    ])
    func credentialsBehindACombiningMarkAreRejected(_ url: String) throws {
        let loaded = try Self.load(Self.store(url: "\"\(url)\""))
        try Self.expectError(loaded, store: "banking", key: "url", "must not carry credentials")
        #expect(loaded.error?.description.contains("s3cret") == false, "\(loaded.error!)")
    }

    /// The other way round: a `/` with a combining mark still ends the authority, so an `@` after
    /// it is in the path, not credentials.
    @Test func atSignAfterAMarkedSlashIsNotTakenForCredentials() throws {
        let loaded = try Self.load(Self.store(url: "\"https://mus.example.com/\u{301}ops@example.com/init\""))
        #expect(loaded.error?.description.contains("must not carry credentials") != true, "\(loaded.error!)")
    }

    @Test func atSignInTheQueryIsNotTakenForCredentials() throws {
        let url = "https://mus.example.com/app/init?appName=banking&contact=ops@example.com"
        #expect(try Self.load(Self.store(url: "\"\(url)\"")).config().stores.first?.url == url)
    }

    @Test func missingURL() throws {
        try Self.expectError(Self.load(Self.store(url: nil)), store: "banking", key: "url", "is required")
    }

    @Test func missingPublicKey() throws {
        try Self.expectError(Self.load(Self.store(publicKey: nil)), store: "banking", key: "public_key", "is required")
    }

    @Test(arguments: ["-bad", String(repeating: "a", count: 65), "a/b", ".hidden", "bänk"])
    func badStoreID(_ id: String) throws {
        try Self.expectError(Self.load(Self.store("\"\(id)\"")), store: id, key: nil, "invalid store id")
    }

    @Test func storeThatIsNotATable() throws {
        try Self.expectError(Self.load("[stores]\nbanking = \"x\"\n"), store: "banking", key: nil, "must be a table")
    }

    @Test func duplicateIDAcrossMainFileAndDropIn() throws {
        let loaded = try Self.load(Self.store("banking"), dropIns: ["banking.toml": Self.store("banking")])
        try Self.expectError(
            loaded, file: loaded.dropIn("banking.toml"), store: "banking", key: nil,
            "already defined in \(loaded.mainPath)")
    }

    @Test func missingFile() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("pinkeeper-\(UUID().uuidString).toml").path
        let error = #expect(throws: ConfigError.self) { try ConfigLoader.load(path: path, environment: [:]) }
        #expect(error?.file == path)
        #expect(error?.store == nil && error?.key == nil)
        #expect(error?.description.contains("does not exist") == true)
    }

    @Test func unreadableFile() throws {
        var fixture = ConfigFixture(main: "")
        fixture.rawMain = Data([0x61, 0x20, 0x3D, 0x20, 0x22, 0xFF, 0xFE, 0x22, 0x0A])  // a = "<invalid UTF-8>"
        try Self.expectError(fixture.load(), store: nil, key: nil, "cannot be read")
    }

    @Test func invalidTOMLNamesTheLine() throws {
        try Self.expectError(
            Self.load("cache_directory = \"/c\"\n\nstate_directory = = \"/s\"\n"), store: nil, key: nil,
            "line 3")
    }

    @Test(arguments: ["\"7 days\"", "\"7D\"", "\"1W\"", "\"w\"", "\"s\"", "\"1.5h\"", "1.5", "true"])
    func badDuration(_ value: String) throws {
        try Self.expectError(
            Self.load(Self.store("banking", "retry_min = \(value)")), store: "banking", key: "retry_min",
            "must be a duration")
    }

    @Test func negativeDuration() throws {
        try Self.expectError(
            Self.load("[defaults]\nrequest_timeout = -5\n"), store: nil, key: "request_timeout",
            "must be a duration from 1s to 1h")
    }

    @Test func zeroPeriodicInterval() throws {
        try Self.expectError(
            Self.load(Self.store("banking", "periodic_update_interval = \"0s\"")), store: "banking",
            key: "periodic_update_interval", "must be a duration from 1s to 365d")
    }

    @Test func badSize() throws {
        try Self.expectError(
            Self.load(Self.store("banking", "max_response_size = \"1MB\"")), store: "banking",
            key: "max_response_size", "must be a size")
    }

    @Test func retryMaxShorterThanRetryMin() throws {
        try Self.expectError(
            Self.load("[defaults]\nretry_min = \"2m\"\nretry_max = \"1m\"\n"), store: nil, key: "retry_max",
            "retry_min")
        try Self.expectError(
            Self.load(Self.store("banking", "retry_min = \"2h\"")), store: "banking", key: "retry_max",
            "retry_min")
    }

    @Test func badMode() throws {
        try Self.expectError(Self.load(Self.store("banking", "mode = \"push\"")), store: "banking", key: "mode", "\"push\"")
    }

    @Test func publicKeyOfTheWrongLength() throws {
        let short = Data(repeating: 4, count: 64).base64EncodedString()
        try Self.expectError(
            Self.load(Self.store(publicKey: "\"\(short)\"")), store: "banking", key: "public_key",
            "65-byte")
    }

    @Test func publicKeyOffTheCurveIsNamedWithItsStore() throws {
        var point = Array(try #require(Data(base64Encoded: Self.keyB)))
        point[64] ^= 0x01
        try Self.expectError(
            Self.load(Self.store(publicKey: "\"\(Data(point).base64EncodedString())\"")), store: "banking",
            key: "public_key", "not a point on the P-256 curve")
    }

    @Test func badSecondKeyInAnArrayIsNamed() throws {
        try Self.expectError(
            Self.load(Self.store(publicKey: "[\"\(Self.keyB)\", \"!!\"]")), store: "banking",
            key: "public_key", "(entry 2)")
    }

    @Test(arguments: ["42", "[42]", "{ key = \"x\" }"])
    func publicKeyOfTheWrongType(_ value: String) throws {
        try Self.expectError(
            Self.load(Self.store(publicKey: value)), store: "banking", key: "public_key",
            "must be a string or an array of strings")
    }

    @Test func emptyPublicKeyArray() throws {
        try Self.expectError(Self.load(Self.store(publicKey: "[]")), store: "banking", key: "public_key", "at least one key")
    }

    @Test func missingFallbackFile() throws {
        try Self.expectError(
            Self.load(Self.store("banking", "fallback_file = \"$DIR/absent.json\"")), store: "banking",
            key: "fallback_file", "does not exist")
    }

    @Test func fallbackFileThatIsNotAList() throws {
        let loaded = try Self.load(
            Self.store("banking", "fallback_file = \"$DIR/fallback.json\""),
            files: ["fallback.json": "{}"])
        try Self.expectError(loaded, store: "banking", key: "fallback_file", "is not a Wultra fingerprint list: fingerprints is missing")
    }

    @Test(arguments: ["\"api.example.com\"", "[1]", "[\"\"]"])
    func expectedCommonNamesOfTheWrongType(_ value: String) throws {
        try Self.expectError(
            Self.load(Self.store("banking", "expected_common_names = \(value)")), store: "banking",
            key: "expected_common_names", "array of")
    }

    @Test func dropInWithANonStoresKey() throws {
        let loaded = try Self.load(Self.store("a"), dropIns: ["50-b.toml": "[defaults]\nretry_min = \"1m\"\n" + Self.store("b")])
        try Self.expectError(loaded, file: loaded.dropIn("50-b.toml"), store: nil, key: "defaults", "allowed keys: stores")
    }

    @Test func errorInADropInStoreNamesTheDropIn() throws {
        let loaded = try Self.load(Self.store("a"), dropIns: ["50-b.toml": Self.store("b", url: "\"ftp://x\"")])
        try Self.expectError(loaded, file: loaded.dropIn("50-b.toml"), store: "b", key: "url", "https://")
    }
}
