import Foundation
import TestSupport
import Testing

/// `pinkeeper update` and `check-config` as an operator runs them: output lines and exit codes.
@Suite("Command line")
struct CommandLineTests {
    private func pinkeeper(_ arguments: [String]) -> ChildProcess.Result {
        ChildProcess.run(TestEnvironment.binary, arguments, timeout: 30)
    }

    @Test("update: one line per store, exit 0; a second run without --force leaves fresh stores alone")
    func updateThenFresh() throws {
        let server = try FixtureServer(), sandbox = try Sandbox()
        try server.route("a", Lists.route(entries: [Lists.entry("api.example.com", 1)]))
        let config = try sandbox.writeConfig([("a", server.url("a"), "challenge")])

        let first = pinkeeper(["update", "--config", config])
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.stdout.hasPrefix("a ok pins=1 next=20"), "\(first.stdout)")

        let second = pinkeeper(["update", "--config", config])
        #expect(second.status == 0)
        #expect(second.stdout.hasPrefix("a fresh pins=1"), "\(second.stdout)")
        #expect(server.requests("a").count == 1)

        let forced = pinkeeper(["update", "--config", config, "--force"])
        #expect(forced.status == 0)
        #expect(server.requests("a").count == 2)
    }

    @Test("no file descriptor left for the sleep timer: one line saying so and EX_OSERR (71), not a crash")
    func runtimeSetupFailure() throws {
        // Four descriptors: stdin/out/err and one that the dynamic loader reuses; the timerfd gets
        // the fourth and the eventfd none.
        let result = ChildProcess.run(
            "/usr/bin/prlimit", ["--nofile=4", TestEnvironment.binary, "update", "--config", "/nonexistent"],
            timeout: 30)
        #expect(result.status == 71, "\(result.stderr)")
        #expect(
            result.stderr
                == "pinkeeper: cannot create the sleep timer (timerfd, eventfd): Too many open files"
                + "; check the open-file limit (LimitNOFILE=)\n"
        )
    }

    @Test("update: a failing store gives exit 1 and names the reason")
    func updateFailure() throws {
        let server = try FixtureServer(), sandbox = try Sandbox()
        try server.route("good", Lists.route(entries: [Lists.entry("api.example.com", 1)]))
        try server.route("bad", Lists.route(entries: [Lists.entry("api.example.com", 1)], extra: ["status": 500]))
        let config = try sandbox.writeConfig([("good", server.url("good"), "challenge"), ("bad", server.url("bad"), "challenge")])

        let result = pinkeeper(["update", "--config", config])
        #expect(result.status == 1)
        let lines = result.stdout.split(separator: "\n")
        #expect(lines.count == 2)
        #expect(lines.contains { $0.hasPrefix("bad http-error pins=0") && $0.contains("HTTP 500") }, "\(lines)")
        #expect(lines.contains { $0.hasPrefix("good ok pins=1") })

        let only = pinkeeper(["update", "--config", config, "--store", "good", "--force"])
        #expect(only.status == 0)
        #expect(only.stdout.split(separator: "\n").count == 1)
    }

    @Test("update: an unknown --store is a usage error")
    func unknownStore() throws {
        let sandbox = try Sandbox()
        let config = try sandbox.writeConfig([])
        let result = pinkeeper(["update", "--config", config, "--store", "nope"])
        #expect(result.status == 64)
        #expect(result.stderr.contains("no store 'nope'"))
    }

    @Test(
        "an invalid configuration: exit 78 and one line naming file, store and key",
        arguments: ["run", "update", "check-config"])
    func invalidConfiguration(command: String) throws {
        let sandbox = try Sandbox()
        let config = sandbox.root.appendingPathComponent("bad.toml").path
        try "[stores.banking]\nurl = \"http://example.com/list\"\npublic_key = \"x\"\n".write(
            toFile: config, atomically: true, encoding: .utf8)
        let result = pinkeeper([command, "--config", config])
        #expect(result.status == 78)
        let lines = result.stderr.split(separator: "\n")
        #expect(lines.count == 1, "\(result.stderr)")
        #expect(lines.first?.contains(config) == true)
        #expect(lines.first?.contains("store 'banking'") == true)
        #expect(lines.first?.contains("key 'url'") == true)
        #expect(try FileManager.default.contentsOfDirectory(atPath: sandbox.cache.path).isEmpty)
    }

    /// The curve check stays at load time for every command, `validate` and `status` included,
    /// though only an update decodes the key.
    @Test(
        "a public key off the P-256 curve: exit 78 naming the store and public_key",
        arguments: [
            ["check-config"], ["status"],
            [
                "validate", "--store", "banking", "--name", "a.example", "--fingerprint",
                String(repeating: "A", count: 43) + "=",
            ],
        ])
    func keyOffTheCurve(command: [String]) throws {
        let sandbox = try Sandbox()
        var point = Array(try #require(Data(base64Encoded: Vectors.keyABase64)))
        point[64] ^= 0x01
        let config = sandbox.root.appendingPathComponent("bad-key.toml").path
        try "[stores.banking]\nurl = \"https://127.0.0.1:1/list\"\npublic_key = \"\(Data(point).base64EncodedString())\"\n"
            .write(toFile: config, atomically: true, encoding: .utf8)
        let result = pinkeeper(command + ["--config", config])
        #expect(result.status == 78)
        let lines = result.stderr.split(separator: "\n")
        #expect(lines.count == 1, "\(result.stderr)")
        #expect(lines.first?.contains("store 'banking'") == true)
        #expect(lines.first?.contains("key 'public_key'") == true)
        #expect(lines.first?.contains("not a point on the P-256 curve") == true)
    }

    @Test("check-config summarises a valid configuration")
    func checkConfig() throws {
        let sandbox = try Sandbox()
        let config = try sandbox.writeConfig([("a", "https://127.0.0.1:1/a", "static")])
        let result = pinkeeper(["check-config", "--config", config])
        #expect(result.status == 0)
        #expect(result.stdout.contains("store a: static https://127.0.0.1:1/a"))
    }

    @Test("the configuration path comes from $PINKEEPER_CONFIG when --config is absent")
    func configFromEnvironment() throws {
        let sandbox = try Sandbox()
        let config = try sandbox.writeConfig([])
        var environment = ProcessInfo.processInfo.environment
        environment["PINKEEPER_CONFIG"] = config
        let result = ChildProcess.run(TestEnvironment.binary, ["check-config"], environment: environment, timeout: 30)
        #expect(result.status == 0)
        #expect(result.stdout.contains(config))
    }
}
