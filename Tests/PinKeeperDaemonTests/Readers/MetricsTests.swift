import Foundation
import PinKeeper
@testable import PinKeeperDaemon
import Testing
import TestSupport
import Logging

/// The Prometheus text exposition format, checked line by line against the format's rules, and
/// the metrics file node_exporter's textfile collector reads.
@Suite("Metrics: Prometheus text and the metrics file")
struct MetricsTests {
    static let families = [
        "pinkeeper_store_health", "pinkeeper_store_pins", "pinkeeper_store_fallback_pins",
        "pinkeeper_store_earliest_expiry_timestamp_seconds", "pinkeeper_store_last_success_timestamp_seconds",
        "pinkeeper_store_last_attempt_timestamp_seconds", "pinkeeper_store_last_attempt_result",
        "pinkeeper_store_next_update_timestamp_seconds", "pinkeeper_store_consecutive_failures",
        "pinkeeper_store_list_info",
    ]

    static let report = StatusReport(
        generated: 1_700_000_000,
        stores: [
            StoreStatus(
                store: "alpha", health: .fresh, pins: 3, fallbackPins: 1, earliestExpiry: 1_800_000_000,
                earliestExpiryName: "api.example.com", updated: 1_699_990_000, lastSuccess: 1_699_990_000,
                lastAttempt: 1_699_990_000, lastResult: .ok, lastReason: nil, consecutiveFailures: 0,
                nextUpdate: 1_700_500_000, cacheFile: "/var/cache/pinkeeper/alpha.json", problems: [],
                listDigest: String(repeating: "ab", count: 32)),
            StoreStatus(
                store: "beta", health: .empty, pins: 0, fallbackPins: 0, earliestExpiry: nil, earliestExpiryName: nil,
                updated: nil, lastSuccess: nil, lastAttempt: 1_699_999_000, lastResult: .networkError,
                lastReason: "connection refused", consecutiveFailures: 2, nextUpdate: 1_700_000_060,
                cacheFile: "/var/cache/pinkeeper/beta.json", problems: []),
        ])

    /// One parsed family: HELP, TYPE and its samples as `labels -> value`.
    struct Family {
        var help: String
        var type: String
        var samples: [String: Double] = [:]
    }

    /// A strict reader of the text format (version 0.0.4): comment lines `# HELP name text` and
    /// `# TYPE name type` before the family's samples, samples of one family contiguous, metric and
    /// label names from the allowed alphabets, quoted label values with only \\ \" \n escapes.
    static func parse(_ text: String) throws -> [String: Family] {
        #expect(text.hasSuffix("\n"))
        let name = #/[a-zA-Z_:][a-zA-Z0-9_:]*/#
        let sample = #/([a-zA-Z_:][a-zA-Z0-9_:]*)\{((?:[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\[\\"n])*",?)*)\} (-?[0-9.e+]+)/#
        var families: [String: Family] = [:]
        var order: [String] = []
        var current: String?
        for line in text.split(separator: "\n", omittingEmptySubsequences: false).dropLast() {
            if line.hasPrefix("# HELP ") {
                let parts = line.dropFirst(7).split(separator: " ", maxSplits: 1)
                let family = String(parts[0])
                try #require(family.wholeMatch(of: name) != nil, "bad metric name \(family)")
                try #require(families[family] == nil, "family \(family) appears twice")
                families[family] = Family(help: parts.count > 1 ? String(parts[1]) : "", type: "")
                order.append(family)
                current = family
            } else if line.hasPrefix("# TYPE ") {
                let parts = line.dropFirst(7).split(separator: " ")
                try #require(parts.count == 2 && String(parts[0]) == current, "TYPE line out of place: \(line)")
                try #require(families[String(parts[0])]?.samples.isEmpty == true, "TYPE after samples: \(line)")
                families[String(parts[0])]?.type = String(parts[1])
            } else {
                let match = try #require(String(line).wholeMatch(of: sample), "not a sample line: \(line)")
                let family = String(match.1)
                try #require(family == current, "sample of \(family) outside its family block")
                try #require(families[family]?.type == "gauge", "sample before TYPE: \(line)")
                let value = try #require(Double(match.3), "bad value in \(line)")
                try #require(families[family]?.samples[String(match.2)] == nil, "duplicate series \(line)")
                families[family]?.samples[String(match.2)] = value
            }
        }
        return families
    }

    @Test("every family has HELP and TYPE, samples are well-formed, one series per store and label set")
    func format() throws {
        let families = try Self.parse(Self.report.prometheus())
        #expect(Set(families.keys) == Set(Self.families))
        for (name, family) in families {
            #expect(!family.help.isEmpty, "\(name) has no help text")
        }
        #expect(families["pinkeeper_store_pins"]?.samples == ["store=\"alpha\"": 3, "store=\"beta\"": 0])
        #expect(families["pinkeeper_store_fallback_pins"]?.samples["store=\"alpha\""] == 1)
        #expect(families["pinkeeper_store_consecutive_failures"]?.samples["store=\"beta\""] == 2)
        // Only a store with a digest has a list sample (beta has never been served a list).
        #expect(families["pinkeeper_store_list_info"]?.samples == ["store=\"alpha\",digest=\"\(String(repeating: "ab", count: 32))\"": 1])
    }

    @Test("values: timestamps in Unix seconds, 0 when unknown; one health and one result set to 1 per store")
    func values() throws {
        let families = try Self.parse(Self.report.prometheus())
        let success = try #require(families["pinkeeper_store_last_success_timestamp_seconds"])
        #expect(success.samples == ["store=\"alpha\"": 1_699_990_000, "store=\"beta\"": 0])
        #expect(families["pinkeeper_store_earliest_expiry_timestamp_seconds"]?.samples["store=\"alpha\""] == 1_800_000_000)
        #expect(families["pinkeeper_store_earliest_expiry_timestamp_seconds"]?.samples["store=\"beta\""] == 0)
        #expect(families["pinkeeper_store_next_update_timestamp_seconds"]?.samples["store=\"beta\""] == 1_700_000_060)
        #expect(families["pinkeeper_store_last_attempt_timestamp_seconds"]?.samples["store=\"beta\""] == 1_699_999_000)

        let health = try #require(families["pinkeeper_store_health"]).samples
        #expect(health.count == 2 * StoreHealth.allCases.count)
        #expect(health["store=\"alpha\",health=\"fresh\""] == 1)
        #expect(health["store=\"beta\",health=\"empty\""] == 1)
        #expect(health.values.reduce(0, +) == 2)

        let results = try #require(families["pinkeeper_store_last_attempt_result"]).samples
        #expect(results.count == 2 * UpdateResult.allCases.count)
        #expect(results["store=\"alpha\",result=\"ok\""] == 1)
        #expect(results["store=\"beta\",result=\"network-error\""] == 1)
        #expect(results.values.reduce(0, +) == 2)
    }

    @Test("label values escape backslash, double quote and line feed")
    func labelEscaping() throws {
        #expect(StatusReport.escapeLabel("a\"b\\c\nd") == "a\\\"b\\\\c\\nd")
        var report = Self.report
        report.stores[0].store = "we\"ird\\id"
        let families = try Self.parse(report.prometheus())
        #expect(families["pinkeeper_store_pins"]?.samples["store=\"we\\\"ird\\\\id\""] == 3)
    }

    @Test("no stores: every family still has HELP and TYPE and no samples")
    func noStores() throws {
        let families = try Self.parse(StatusReport(generated: 0, stores: []).prometheus())
        #expect(families.count == Self.families.count)
        #expect(families.values.allSatisfy { $0.samples.isEmpty })
    }

    @Test("MetricsFile.write: the same text as status --format prometheus, replaced atomically, mode 0644")
    func metricsFile() throws {
        let world = try ReaderWorld()
        let textfiles = world.root.appendingPathComponent("textfile")
        try FileManager.default.createDirectory(at: textfiles, withIntermediateDirectories: true)
        chmod(textfiles.path, 0o755)
        let target = textfiles.appendingPathComponent("pinkeeper.prom")
        try world.configure([.init(id: "alpha"), .init(id: "beta")], topLevel: "metrics_file = \"\(target.path)\"")
        let now = ReaderWorld.now
        try world.publish(
            "alpha", [Pin(name: "a.example.com", fingerprint: [UInt8](repeating: 1, count: 32), expires: ReaderWorld.future)],
            updated: now - 100, nextUpdate: now + 5_000)
        try world.saveState("alpha") {
            $0.lastSuccess = now - 100; $0.lastAttempt = now - 100; $0.lastResult = .ok
        }
        try world.publish(
            "beta", [Pin(name: "b.example.com", fingerprint: [UInt8](repeating: 2, count: 32), expires: ReaderWorld.future)],
            updated: now - 100, nextUpdate: now + 9_000)
        try world.saveState("beta") {
            $0.lastSuccess = now - 100; $0.lastAttempt = now - 10; $0.lastResult = .httpError; $0.consecutiveFailures = 1
            $0.retryAt = now + 300
        }
        let configuration = try ConfigLoader.load(path: world.config.path, environment: [:])
        #expect(configuration.metricsFile == target.path)

        try MetricsFile.write(configuration: configuration, now: now)
        let written = try String(contentsOf: target, encoding: .utf8)
        #expect(written == StatusReport.collect(configuration: configuration, now: now).prometheus())
        let families = try Self.parse(written)
        #expect(families["pinkeeper_store_last_attempt_result"]?.samples["store=\"beta\",result=\"http-error\""] == 1)
        #expect(families["pinkeeper_store_next_update_timestamp_seconds"]?.samples["store=\"beta\""] == Double(now + 300))
        let attributes = try FileManager.default.attributesOfItem(atPath: target.path)
        #expect((attributes[.posixPermissions] as? Int) == 0o644)
        #expect(try FileManager.default.contentsOfDirectory(atPath: textfiles.path) == ["pinkeeper.prom"])

        // Nothing in these values depends on the clock, so the command prints the very same text.
        let command = world.run("status", ["--format", "prometheus"])
        #expect(command.status == 1)  // beta is failing
        #expect(command.stdout == written)

        // A second pass replaces the file (a new inode), never edits it in place.
        let before = try #require(try FileManager.default.attributesOfItem(atPath: target.path)[.systemFileNumber] as? UInt64)
        try MetricsFile.write(configuration: configuration, now: now)
        let after = try #require(try FileManager.default.attributesOfItem(atPath: target.path)[.systemFileNumber] as? UInt64)
        #expect(before != after)
    }

    @Test("MetricsFile: nothing is written without metrics_file; a missing directory is an error that names it")
    func metricsFileErrors() throws {
        let world = try ReaderWorld()
        try world.configure([.init(id: "alpha")])
        var configuration = try ConfigLoader.load(path: world.config.path, environment: [:])
        #expect(configuration.metricsFile == nil)
        try MetricsFile.write(configuration: configuration, now: ReaderWorld.now)
        #expect(try FileManager.default.contentsOfDirectory(atPath: world.root.path).sorted() == ["cache", "pinkeeper.toml", "state"])

        configuration.metricsFile = world.root.appendingPathComponent("missing/pinkeeper.prom").path
        let error = #expect(throws: FileError.self) { try MetricsFile.write(configuration: configuration, now: ReaderWorld.now) }
        #expect(error?.description.contains("missing") == true)

        let log = LogRecorder()
        MetricsFile.update(configuration: configuration, now: ReaderWorld.now, logger: log.logger)
        #expect(log.all.contains { $0.level == .warning && $0.metadata["file"] == configuration.metricsFile })
    }
}
