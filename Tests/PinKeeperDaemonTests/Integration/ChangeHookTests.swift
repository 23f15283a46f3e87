import Foundation
import Glibc
import TestSupport
import Testing
import PinKeeper

/// `on_change` through the real binary: `pinkeeper update` and `pinkeeper run` against the fixture server.
@Suite("Change hooks")
struct ChangeHookTests {
    let server: FixtureServer
    let sandbox: Sandbox

    init() throws {
        server = try FixtureServer()
        sandbox = try Sandbox()
    }

    private func update(_ config: String, force: Bool = true) -> ChildProcess.Result {
        var environment = ProcessInfo.processInfo.environment
        environment["PINKEEPER_TEST_SECRET"] = "must-not-reach-the-hook"
        return ChildProcess.run(
            TestEnvironment.binary, ["update", "--config", config] + (force ? ["--force"] : []),
            environment: environment, timeout: 30)
    }

    private func hookLines(_ stderr: String) -> [Substring] {
        stderr.split(separator: "\n").filter { $0.contains("change hook") }
    }

    @Test("update: the hook runs once per change, with argv and its variables; an unchanged or expired-only list runs none")
    func runsOnChangeOnly() throws {
        let hook = try HookScript(in: sandbox.root, body: #"printf 'hello\tworld\n\033[31mred'; echo oops >&2"#)
        try server.route("a", Lists.route(entries: [Lists.entry("api.example.com", 1)]))
        let config = try sandbox.writeConfig([("a", server.url("a"), "challenge")], storeExtra: hook.keys())

        let first = update(config)
        #expect(first.status == 0, "\(first.stderr)")
        let runs = hook.runs
        try #require(runs.count == 1, "\(first.stderr)")
        #expect(runs[0]["store"] == "a")
        #expect(runs[0]["file"] == sandbox.cacheFile("a").path)
        #expect(runs[0]["pins"] == "1")
        #expect(runs[0]["argc"] == "2" && runs[0]["args"] == "one two words")
        #expect(runs[0]["secret"] == "unset")
        #expect(runs[0]["path"] == "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin")
        #expect(runs[0]["cwd"] == "/")
        // The output is in the log, escaped: no tab, newline or escape character gets through raw.
        let finished = try #require(hookLines(first.stderr).first, "\(first.stderr)")
        #expect(finished.isLog("info", "change hook finished"), "\(finished)")
        #expect(finished.contains("store=a") && finished.contains("exit_status=0") && finished.contains("duration="))
        #expect(finished.contains(#"stdout=hello\tworld\n\u{1b}[31mred"#), "\(finished)")
        #expect(finished.contains("stderr=oops\\n"), "\(finished)")
        #expect(!finished.contains("\u{1b}") && !finished.contains("\t"))

        let unchanged = update(config)
        #expect(unchanged.status == 0)
        #expect(hook.runs.count == 1, "the same pins again ran the hook")
        #expect(hookLines(unchanged.stderr).isEmpty)

        try server.route("a", Lists.route(entries: [Lists.entry("old.example.com", 9, expires: 1_000_000)]))
        let expiredOnly = update(config)
        #expect(expiredOnly.status == 0, "\(expiredOnly.stdout)")
        #expect(hook.runs.count == 1, "a list of only expired entries ran the hook")

        try server.route("a", Lists.route(entries: [Lists.entry("api.example.com", 1), Lists.entry("api.example.com", 2)]))
        #expect(update(config).status == 0)
        #expect(hook.runs.count == 2)
        #expect(hook.runs.last?["pins"] == "2")
    }

    @Test("update: a 304 for a static list runs no hook")
    func notModified() throws {
        let hook = try HookScript(in: sandbox.root)
        let entries = [Lists.entry("api.example.com", 1)]
        try server.route("s", Lists.route(mode: "static", entries: entries, extra: ["etag": true]))
        let config = try sandbox.writeConfig([("s", server.url("s"), "static")], storeExtra: hook.keys())
        #expect(update(config).status == 0)
        #expect(hook.runs.count == 1)
        let again = update(config)
        #expect(again.status == 0)
        #expect(server.requests("s").last?.status == 304, "the server did not answer 304")
        #expect(hook.runs.count == 1)
    }

    @Test("update: a failing hook is a warning; the update still succeeds")
    func failingHook() throws {
        let hook = try HookScript(in: sandbox.root, body: "echo 'cannot reload' >&2; exit 3")
        try server.route("a", Lists.route(entries: [Lists.entry("api.example.com", 1)]))
        let config = try sandbox.writeConfig([("a", server.url("a"), "challenge")], storeExtra: hook.keys())
        let result = update(config)
        #expect(result.status == 0)
        #expect(result.stdout.hasPrefix("a ok pins=1"))
        let line = try #require(hookLines(result.stderr).first, "\(result.stderr)")
        #expect(line.isLog("warning", "change hook failed"), "\(line)")
        #expect(line.contains("exit_status=3") && LogfmtLine(line)?["stderr"] == "cannot reload\\n", "\(line)")
    }

    @Test("update: a hanging hook and its children are killed at hook_timeout, and update then exits")
    func hangingHookUpdate() throws {
        let childFile = sandbox.root.appendingPathComponent("child").path
        let hook = try HookScript(in: sandbox.root, body: "sleep 300 & echo $! > '\(childFile)'; sleep 300")
        try server.route("a", Lists.route(entries: [Lists.entry("api.example.com", 1)]))
        let config = try sandbox.writeConfig([("a", server.url("a"), "challenge")], storeExtra: hook.keys(timeout: "1s"))
        let started = Date()
        let result = update(config)
        let took = Date().timeIntervalSince(started)
        #expect(result.status == 0)
        #expect(took >= 1 && took < 10, "took \(took) s")
        let line = try #require(hookLines(result.stderr).first, "\(result.stderr)")
        #expect(
            line.isLog("warning", "change hook failed") && line.contains("timed_out=true")
                && line.contains("signal=SIGTERM"), "\(line)")
        let child = try #require(
            pid_t(
                (try? String(contentsOfFile: childFile, encoding: .utf8))?
                    .trimmingCharacters(in: .whitespacesAndNewlines) ?? ""))
        #expect(HookProcessTests.isGone(child), "the hook's background child \(child) survived")
    }

    @Test("run: while a hook hangs the watchdog keeps pinging; it is killed at hook_timeout; NOTIFY_SOCKET is not passed on")
    func hangingHookDaemon() throws {
        let hook = try HookScript(in: sandbox.root, body: "sleep 300")
        try server.route("a", Lists.route(entries: [Lists.entry("api.example.com", 1)]))
        let config = try sandbox.writeConfig([("a", server.url("a"), "challenge")], storeExtra: hook.keys(timeout: "3s"))
        let socket = try NotifySocket()
        let daemon = try DaemonProcess(config: config, environment: ["NOTIFY_SOCKET": socket.address, "WATCHDOG_USEC": "1000000"])
        _ = socket.collect(until: { $0.contains("READY=1") }, timeout: 15)
        let runs = hook.waitForRuns(1)
        try #require(runs.count == 1)
        #expect(runs[0]["notify"] == "unset")
        let messages = socket.collect(until: { _ in false }, timeout: 2.5)
        #expect(messages.filter { $0 == "WATCHDOG=1" }.count >= 4, "got \(messages)")
        usleep(2_000_000)  // past hook_timeout
        daemon.signal(SIGTERM)
        #expect(daemon.waitForExit(timeout: 10) == 0)
        let line = try #require(hookLines(daemon.stderr).first, "\(daemon.stderr)")
        #expect(line.isLog("warning", "change hook failed") && line.contains("timed_out=true"), "\(line)")
    }

    @Test("run: SIGTERM ends a running hook at once instead of waiting for its hook_timeout")
    func stopDuringHook() throws {
        let hook = try HookScript(in: sandbox.root, body: "sleep 300")
        try server.route("a", Lists.route(entries: [Lists.entry("api.example.com", 1)]))
        let config = try sandbox.writeConfig([("a", server.url("a"), "challenge")], storeExtra: hook.keys(timeout: "10m"))
        let daemon = try DaemonProcess(config: config)
        #expect(hook.waitForRuns(1, timeout: 15).count == 1)
        let sent = Date()
        daemon.signal(SIGTERM)
        #expect(daemon.waitForExit(timeout: 10) == 0)
        #expect(Date().timeIntervalSince(sent) < 3, "stop waited \(Date().timeIntervalSince(sent)) s")
        let line = try #require(hookLines(daemon.stderr).first, "\(daemon.stderr)")
        #expect(line.contains("reason=\"ended early: pinkeeper is stopping\""), "\(line)")
    }

    @Test("run: never two runs at once for a store; changes meanwhile coalesce into one more run with the newest pins")
    func coalesced() throws {
        let release = sandbox.root.appendingPathComponent("release").path
        let hook = try HookScript(in: sandbox.root, body: "while [ ! -e '\(release)' ]; do sleep 0.05; done")
        try server.route("a", Lists.route(entries: [Lists.entry("api.example.com", 1)]))
        let config = try sandbox.writeConfig([("a", server.url("a"), "challenge")], storeExtra: hook.keys())
        let socket = try NotifySocket()
        let daemon = try DaemonProcess(config: config, environment: ["NOTIFY_SOCKET": socket.address])
        _ = socket.collect(until: { $0.contains("READY=1") }, timeout: 15)
        #expect(hook.waitForRuns(1).count == 1)
        for count in 2...3 {  // two more changes while the first run waits
            try server.route("a", Lists.route(entries: (1...count).map { Lists.entry("api.example.com", UInt8($0)) }))
            daemon.signal(SIGUSR1)
            let status = socket.collect(until: { $0.hasPrefix("STATUS=") }, timeout: 10)
            #expect(status.last?.hasPrefix("STATUS=") == true)
        }
        #expect(hook.runs.count == 1, "a second run started while the first was still running")
        _ = FileManager.default.createFile(atPath: release, contents: nil)
        let runs = hook.waitForRuns(2)
        usleep(500_000)  // a third run would have started by now
        #expect(hook.runs.map { $0["pins"] } == ["1", "3"])
        #expect(!hook.overlapped)
        daemon.signal(SIGTERM)
        #expect(daemon.waitForExit(timeout: 10) == 0)
        #expect(runs.count == 2)
    }

    @Test("an invalid on_change stops run and update with exit 78 and one line naming it", arguments: ["run", "update"])
    func invalidHook(command: String) throws {
        let config = try sandbox.writeConfig([("a", server.url("a"), "challenge")], storeExtra: "on_change = [\"reload-pins\"]")
        let result = ChildProcess.run(TestEnvironment.binary, [command, "--config", config], timeout: 30)
        #expect(result.status == 78)
        #expect(
            result.stderr
                == "pinkeeper: \(config): store 'a': key 'on_change': the program \"reload-pins\""
                + " must be an absolute path (no PATH search, no shell)\n"
        )
    }

    @Test(
        "update as root: a hook in a group-writable directory is not run, the update still publishes, one line says why",
        .enabled(if: geteuid() == 0, "needs root: only a process running as root refuses such a hook"))
    func untrustedHookAsRoot() throws {
        let shared = sandbox.root.appendingPathComponent("shared")
        try FileManager.default.createDirectory(at: shared, withIntermediateDirectories: true)
        let hook = try HookScript(in: shared)
        chmod(shared.path, 0o775)
        try server.route("a", Lists.route(entries: [Lists.entry("api.example.com", 1)]))
        let config = try sandbox.writeConfig([("a", server.url("a"), "challenge")], storeExtra: hook.keys())
        let result = update(config)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.hasPrefix("a ok pins=1"), "\(result.stdout)")
        #expect(try sandbox.published("a").list.pins.count == 1)
        #expect(hook.runs.isEmpty, "the hook ran")
        let lines = hookLines(result.stderr)
        #expect(lines.count == 1, "\(result.stderr)")
        let line = try #require(lines.first)
        #expect(
            line.isLog("warning", "change hook not run") && line.contains("store=a") && line.contains("hook=\(hook.path)")
                && line.contains("the directory \(shared.path) is writable by its group and not sticky"), "\(line)")
    }
}
