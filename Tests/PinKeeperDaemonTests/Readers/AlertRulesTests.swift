import Foundation
@testable import PinKeeperDaemon
import TestSupport
import Testing

/// The shipped alerting rules and their promtool tests name only what `status --format
/// prometheus` really writes, so renaming a family or a health breaks this test rather than
/// silently muting an alert (promtool's own tests only see the series they are given).
@Suite("Alert rules: names match the metrics")
struct AlertRulesTests {
    static let directory = TestEnvironment.packageRoot.appendingPathComponent("packaging/prometheus")
    static let files = [
        "pinkeeper.rules.yml", "pinkeeper.rules.test.yml", "pinkeeper.rules.days.test.yml", "pinkeeper.rules.split-view.test.yml",
    ]

    static func text(_ file: String) throws -> String {
        try String(contentsOf: directory.appendingPathComponent(file), encoding: .utf8)
    }

    /// `MetricsTests.report` with a probe target in every outcome and one not probed yet: the
    /// probe families are written only when targets are configured.
    static let probedReport: StatusReport = {
        var report = MetricsTests.report
        report.probes =
            ProbeOutcome.allCases.enumerated().map { index, outcome in
                ProbeStatus(
                    store: "alpha", target: "host\(index).example.com:443",
                    record: ProbeRecord(
                        target: "host\(index).example.com:443", outcome: outcome,
                        checked: 1_699_999_000, reason: "test", leafExpires: 1_800_000_000))
            } + [ProbeStatus(store: "beta", target: "new.example.com:443")]
        return report
    }()

    @Test(arguments: files)
    func everyPinkeeperFamilyNamedExists(_ file: String) throws {
        let plain = try MetricsTests.parse(MetricsTests.report.prometheus())
        let probed = try MetricsTests.parse(Self.probedReport.prometheus())
        let named = Set(try Self.text(file).matches(of: #/pinkeeper_[a-z_]+/#).map { String($0.output) })
        #expect(!named.isEmpty)
        for name in named.sorted() {
            // A probe family is looked up where probes exist, any other where none do.
            let families = name.hasPrefix("pinkeeper_probe_") ? probed : plain
            #expect(families[name] != nil, "\(file) names \(name), which pinkeeper does not write")
        }
    }

    @Test func probeRulesNameProbeFamilies() throws {
        let named = Set(try Self.text("pinkeeper.rules.yml").matches(of: #/pinkeeper_probe_[a-z_]+/#).map { String($0.output) })
        #expect(named.contains("pinkeeper_probe_outcome"))
        #expect(named.contains("pinkeeper_probe_last_check_timestamp_seconds"))
    }

    @Test(arguments: ["pinkeeper.rules.yml", "pinkeeper.rules.test.yml"])
    func everyProbeOutcomeNamedExists(_ file: String) throws {
        let outcomes = try Self.text(file).matches(of: #/outcome="([a-z]+)"/#).map { String($0.output.1) }
        #expect(!outcomes.isEmpty)
        for outcome in outcomes {
            #expect(ProbeOutcome(rawValue: outcome) != nil, "\(file) names probe outcome \"\(outcome)\"")
        }
    }

    @Test(arguments: ["pinkeeper.rules.yml", "pinkeeper.rules.test.yml"])
    func everyHealthNamedExists(_ file: String) throws {
        let healths = try Self.text(file).matches(of: #/health="([a-z]+)"/#).map { String($0.output.1) }
        #expect(!healths.isEmpty)
        for health in healths {
            #expect(StoreHealth(rawValue: health) != nil, "\(file) names health \"\(health)\"")
        }
    }
}
