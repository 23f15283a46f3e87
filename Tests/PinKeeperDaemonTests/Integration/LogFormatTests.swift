import Foundation
import Glibc
import TestSupport
import Testing

/// The lines `update` and `run` write on stderr when it is not the journal, through the binary:
/// `log_format`, `--log-format`, and a reload that changes the key.
@Suite("Log formats through the binary")
struct LogFormatTests {
    let server: FixtureServer
    let sandbox: Sandbox

    init() throws {
        server = try FixtureServer()
        sandbox = try Sandbox()
        try server.route("a", Lists.route(entries: [Lists.entry("api.example.com", 1), Lists.entry("www.example.com", 2)]))
    }

    /// The fields of the `update-succeeded` event for store `a` with two pins.
    static func expectUpdateFields(_ fields: (String) -> String?, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(
            fields("time")?.wholeMatch(of: #/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/#) != nil, "time \(fields("time") ?? "none")",
            sourceLocation: sourceLocation)
        #expect(fields("level") == "info", sourceLocation: sourceLocation)
        #expect(fields("msg") == "update succeeded", sourceLocation: sourceLocation)
        #expect(fields("event") == "update-succeeded", sourceLocation: sourceLocation)
        #expect(fields("message_id") == "fea0a00742744d54a3c895f02958cb80", sourceLocation: sourceLocation)
        #expect(fields("store") == "a" && fields("result") == "ok" && fields("pins") == "2", sourceLocation: sourceLocation)
        #expect(fields("next_update")?.wholeMatch(of: #/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ/#) != nil, sourceLocation: sourceLocation)
    }

    static func jsonLines(_ stderr: String) throws -> [[String: String]] {
        try stderr.split(separator: "\n").map { line in
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8))
            return try #require(object as? [String: String], "\(line)")
        }
    }

    @Test("update: logfmt by default, every line a log line with the update's fields")
    func updateLogfmt() throws {
        let config = try sandbox.writeConfig([("a", server.url("a"), "challenge")])
        let result = ChildProcess.run(TestEnvironment.binary, ["update", "--config", config], timeout: 30)
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stderr.split(separator: "\n")
        #expect(LogfmtLine.all(result.stderr).count == lines.count, "\(result.stderr)")
        let line = try #require(LogfmtLine.all(result.stderr).first { $0["event"] == "update-succeeded" }, "\(result.stderr)")
        Self.expectUpdateFields { line[$0] }
        #expect(lines.first { $0.contains("update-succeeded") }?.hasPrefix("time=") == true)
    }

    @Test("update: log_format = \"json\" makes every line a JSON object with the update's fields")
    func updateJSON() throws {
        let config = try sandbox.writeConfig([("a", server.url("a"), "challenge")], extra: "log_format = \"json\"")
        let result = ChildProcess.run(TestEnvironment.binary, ["update", "--config", config], timeout: 30)
        #expect(result.status == 0, "\(result.stderr)")
        let lines = try Self.jsonLines(result.stderr)
        let line = try #require(lines.first { $0["event"] == "update-succeeded" }, "\(result.stderr)")
        Self.expectUpdateFields { line[$0] }
    }

    @Test("--log-format wins over log_format")
    func optionWins() throws {
        let config = try sandbox.writeConfig([("a", server.url("a"), "challenge")], extra: "log_format = \"json\"")
        let result = ChildProcess.run(TestEnvironment.binary, ["update", "--log-format", "logfmt", "--config", config], timeout: 30)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(LogfmtLine.all(result.stderr).contains { $0["event"] == "update-succeeded" }, "\(result.stderr)")
        #expect(!result.stderr.contains("{"))
        let bad = ChildProcess.run(TestEnvironment.binary, ["update", "--log-format", "text", "--config", config], timeout: 30)
        #expect(bad.status == 64, "\(bad.stderr)")
    }

    @Test("run: a reload that sets log_format = \"json\" switches the lines to JSON from then on")
    func runAndReload() throws {
        let config = try sandbox.writeConfig([("a", server.url("a"), "challenge")])
        let socket = try NotifySocket()
        let daemon = try DaemonProcess(config: config, environment: ["NOTIFY_SOCKET": socket.address])
        #expect(socket.collect(until: { $0.contains("READY=1") }, timeout: 15).last?.contains("READY=1") == true)
        try sandbox.writeConfig([("a", server.url("a"), "challenge")], extra: "log_format = \"json\"")
        daemon.signal(SIGHUP)
        #expect(socket.collect(until: { $0 == "READY=1" }, timeout: 10).last == "READY=1")
        daemon.signal(SIGTERM)
        #expect(daemon.waitForExit(timeout: 5) == 0)

        let lines = daemon.stderr.split(separator: "\n")
        let reloaded = try #require(lines.firstIndex { $0.contains("configuration reloaded") }, "\(daemon.stderr)")
        let before = LogfmtLine.all(lines[..<reloaded].joined(separator: "\n"))
        #expect(before.count == reloaded, "\(daemon.stderr)")
        let update = try #require(before.first { $0["event"] == "update-succeeded" }, "\(daemon.stderr)")
        Self.expectUpdateFields { update[$0] }
        let after = try Self.jsonLines(lines[reloaded...].joined(separator: "\n"))
        #expect(after.first?["msg"] == "configuration reloaded" && after.last?["msg"] == "stopping", "\(after)")
    }
}
