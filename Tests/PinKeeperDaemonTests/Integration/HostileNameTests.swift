import Foundation
import TestSupport
import Testing

/// A static list whose unsigned entry has a hostile name: the name reaches the failure reason,
/// and every line the real binary prints about it must stay one line with the name escaped.
@Suite("Hostile entry names in the output")
struct HostileNameTests {
    @Test("pinkeeper update: stderr log, stdout summary and status table show the name escaped")
    func hostileName() throws {
        let server = try FixtureServer(), sandbox = try Sandbox()
        let entry = Lists.entry(LogInjectionTests.hostile, 7, extra: ["signature": ""])
        try server.route("evil", Lists.route(mode: "static", entries: [entry]))
        let config = try sandbox.writeConfig([("evil", server.url("evil"), "static")])
        let reason = "the entry '\(LogInjectionTests.hostileEscaped)' (expires \(Lists.future)) has no signature"

        let update = ChildProcess.run(TestEnvironment.binary, ["update", "--config", config], timeout: 30)
        #expect(update.status == 1, "\(update.stderr)")
        let logLines = update.stderr.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
        #expect(update.stderr.hasSuffix("\n"))
        #expect(
            logLines.contains { $0.isLog("error", "update failed") && LogfmtLine($0)?["reason"] == reason },
            "\(update.stderr)")
        for line in logLines {
            #expect(
                ["trace", "debug", "info", "notice", "warning", "error", "critical"].contains { LogfmtLine(line)?["level"] == $0 },
                "a line not written by the logger: \(line)")
            #expect(!LogInjectionTests.hasControl(String(line)), "\(line)")
        }
        #expect(!update.stderr.contains("\nINFO: forged"))

        #expect(update.stdout.hasPrefix("evil invalid-data pins=0 "), "\(update.stdout)")
        #expect(update.stdout.hasSuffix(" reason=\"\(reason)\"\n"), "\(update.stdout)")
        #expect(update.stdout.filter { $0 == "\n" }.count == 1)
        #expect(!LogInjectionTests.hasControl(String(update.stdout.dropLast())))

        let status = ChildProcess.run(TestEnvironment.binary, ["status", "--config", config], timeout: 30)
        #expect(status.stdout.contains("evil: last attempt failed: invalid-data: \(reason) (1 failure)"), "\(status.stdout)")
        #expect(!LogInjectionTests.hasControl(status.stdout.replacingOccurrences(of: "\n", with: "")))
    }
}
