import Foundation
@testable import PinKeeperDaemon
import Testing

/// The shipped alerting rules and their promtool tests name only what `status --format
/// prometheus` really writes, so renaming a family or a health breaks this test rather than
/// silently muting an alert (promtool's own tests only see the series they are given).
@Suite("Alert rules: names match the metrics")
struct AlertRulesTests {
    static let directory = TestEnvironment.packageRoot.appendingPathComponent("packaging/prometheus")
    static let files = ["pinkeeper.rules.yml", "pinkeeper.rules.test.yml", "pinkeeper.rules.days.test.yml"]

    static func text(_ file: String) throws -> String {
        try String(contentsOf: directory.appendingPathComponent(file), encoding: .utf8)
    }

    @Test(arguments: files)
    func everyPinkeeperFamilyNamedExists(_ file: String) throws {
        let families = try MetricsTests.parse(MetricsTests.report.prometheus())
        let named = Set(try Self.text(file).matches(of: #/pinkeeper_[a-z_]+/#).map { String($0.output) })
        #expect(!named.isEmpty)
        for name in named.sorted() {
            #expect(families[name] != nil, "\(file) names \(name), which pinkeeper does not write")
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
