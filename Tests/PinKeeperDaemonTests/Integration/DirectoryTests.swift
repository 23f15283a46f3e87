import Foundation
import Glibc
import PinKeeper
@testable import PinKeeperDaemon
import TestSupport
import Testing

/// `run` and `update` create the cache and state directories they are given, and a directory
/// that cannot be made or used is one clear error at start (docs/cache-format.md).
@Suite("Cache and state directories")
struct DirectoryTests {
    private func mode(_ path: URL) -> mode_t? {
        var info = stat()
        return stat(path.path, &info) == 0 ? info.st_mode & 0o7777 : nil
    }

    @Test("update creates missing cache and state directories with their parents, 0755, and publishes")
    func updateCreatesDirectories() throws {
        let server = try FixtureServer(), sandbox = try Sandbox()
        try server.route("a", Lists.route(entries: [Lists.entry("api.example.com", 1)]))
        let base = sandbox.root.appendingPathComponent("fresh")
        let cache = base.appendingPathComponent("var/cache/pinkeeper"), state = base.appendingPathComponent("var/lib/pinkeeper")
        let config = try sandbox.writeConfig(
            [("a", server.url("a"), "challenge")], cacheDirectory: cache.path,
            stateDirectory: state.path)

        let result = ChildProcess.run(TestEnvironment.binary, ["update", "--config", config], timeout: 30)
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        #expect(result.stdout.hasPrefix("a ok pins=1"), "\(result.stdout)")
        for directory in [base, base.appendingPathComponent("var"), base.appendingPathComponent("var/cache"), cache, state] {
            #expect(mode(directory) == 0o755, "\(directory.path)")
        }
        #expect(FileManager.default.fileExists(atPath: cache.appendingPathComponent("a.json").path))
        #expect(StateDirectory(path: state.path).load(store: "a").lastResult == .ok)
    }

    @Test("run creates a missing state directory, so back-off and status work from the first failure")
    func runCreatesStateDirectory() throws {
        let server = try FixtureServer(), sandbox = try Sandbox()
        try server.route("a", Lists.route(entries: [Lists.entry("api.example.com", 1)], extra: ["status": 500]))
        let state = sandbox.root.appendingPathComponent("missing/state")
        let config = try sandbox.writeConfig(
            [("a", server.url("a"), "challenge")],
            storeExtra: "retry_min = \"1s\"\nretry_max = \"4s\"", stateDirectory: state.path)
        let daemon = try DaemonProcess(config: config)
        let deadline = Date().addingTimeInterval(15)
        while server.requests("a").count < 3 && Date() < deadline && daemon.isRunning { usleep(50_000) }
        usleep(300_000)  // the third attempt's state is saved just after its response
        daemon.signal(SIGTERM)
        #expect(daemon.waitForExit(timeout: 5) == 0, "\(daemon.stderr)")
        #expect(mode(state) == 0o755)
        let saved = StateDirectory(path: state.path).load(store: "a")
        #expect(saved.lastResult == .httpError)
        #expect(saved.consecutiveFailures >= 2, "failures recorded: \(saved.consecutiveFailures)")

        let status = ChildProcess.run(TestEnvironment.binary, ["status", "--config", config, "--json"], timeout: 30)
        #expect(status.stdout.contains("\"lastResult\": \"http-error\""), "\(status.stdout)")
    }

    @Test(
        "a directory that cannot be created: update and run each give one line naming it, before any fetch",
        arguments: ["update", "run"])
    func uncreatable(command: String) throws {
        let server = try FixtureServer(), sandbox = try Sandbox()
        try server.route("a", Lists.route(entries: [Lists.entry("api.example.com", 1)]))
        let blocker = sandbox.root.appendingPathComponent("not-a-directory")
        try Data("a file".utf8).write(to: blocker)
        let cache = blocker.appendingPathComponent("cache").path
        let config = try sandbox.writeConfig([("a", server.url("a"), "challenge")], cacheDirectory: cache)

        let result = ChildProcess.run(TestEnvironment.binary, [command, "--config", config], timeout: 10)
        #expect(!result.timedOut, "\(command) kept running")
        #expect(result.status == (command == "run" ? 73 : 1))
        let lines = result.stderr.split(separator: "\n")
        #expect(lines.count == 1, "\(result.stderr)")
        #expect(lines.first?.contains("cache directory \(cache)") == true, "\(result.stderr)")
        #expect(lines.first?.contains("Not a directory") == true, "\(result.stderr)")
        #expect(result.stdout.isEmpty, "\(result.stdout)")
        #expect(server.requests("a").isEmpty)
    }

    @Test("a reload naming a directory that cannot be created fails, and the daemon keeps its configuration")
    func reloadUncreatable() throws {
        let server = try FixtureServer(), sandbox = try Sandbox()
        try server.route("a", Lists.route(entries: [Lists.entry("api.example.com", 1)]))
        let config = try sandbox.writeConfig([("a", server.url("a"), "challenge")])
        let socket = try NotifySocket()
        let daemon = try DaemonProcess(config: config, environment: ["NOTIFY_SOCKET": socket.address])
        _ = socket.collect(until: { $0.contains("READY=1") }, timeout: 15)

        let blocker = sandbox.root.appendingPathComponent("not-a-directory")
        try Data("a file".utf8).write(to: blocker)
        try sandbox.writeConfig([("a", server.url("a"), "challenge")], stateDirectory: blocker.appendingPathComponent("state").path)
        daemon.signal(SIGHUP)
        #expect(socket.collect(until: { $0 == "READY=1" }, timeout: 10).last == "READY=1")
        #expect(daemon.isRunning)
        daemon.signal(SIGTERM)
        #expect(daemon.waitForExit(timeout: 5) == 0)
        let errors = daemon.stderr.split(separator: "\n").filter { $0.isLog("error", "reload failed") }
        #expect(errors.count == 1, "\(daemon.stderr)")
        #expect(
            errors.first?.contains("key 'state_directory'") == true && errors.first?.contains("Not a directory") == true,
            "\(errors)")
    }

    @Test("a state directory writable by its group is refused at start, naming it")
    func groupWritable() throws {
        let server = try FixtureServer(), sandbox = try Sandbox()
        try server.route("a", Lists.route(entries: [Lists.entry("api.example.com", 1)]))
        let config = try sandbox.writeConfig([("a", server.url("a"), "challenge")])
        chmod(sandbox.state.path, 0o775)
        let result = ChildProcess.run(TestEnvironment.binary, ["update", "--config", config], timeout: 30)
        #expect(result.status == 1)
        #expect(result.stderr.contains("state directory \(sandbox.state.path)"), "\(result.stderr)")
        #expect(result.stderr.contains("writable by its group (chmod g-w it)"), "\(result.stderr)")
        #expect(server.requests("a").isEmpty)
    }
    /// Runs `update` and expects it refused before any fetch with one stderr line holding every fragment.
    private func expectRefused(_ config: String, _ server: FixtureServer, _ fragments: [String]) {
        let result = ChildProcess.run(TestEnvironment.binary, ["update", "--config", config], timeout: 30)
        #expect(result.status == 1, "\(result.stdout)\(result.stderr)")
        let lines = result.stderr.split(separator: "\n")
        #expect(lines.count == 1, "\(result.stderr)")
        for fragment in fragments { #expect(lines.first?.contains(fragment) == true, "\(fragment): \(result.stderr)") }
        #expect(server.requests("a").isEmpty)
    }

    @Test(
        "a cache directory owned by another user is refused: its owner could swap the published files",
        .enabled(if: geteuid() == 0, "skipped: needs root to chown the cache directory to nobody"))
    func foreignOwner() throws {
        let server = try FixtureServer(), sandbox = try Sandbox()
        try server.route("a", Lists.route(entries: [Lists.entry("api.example.com", 1)]))
        let config = try sandbox.writeConfig([("a", server.url("a"), "challenge")])
        #expect(chown(sandbox.cache.path, 65534, 65534) == 0)
        expectRefused(config, server, ["cache directory \(sandbox.cache.path)", "owned by uid 65534", "chown"])
    }

    @Test("a cache directory below a parent that others may write, without the sticky bit, is refused")
    func othersWritableParent() throws {
        let server = try FixtureServer(), sandbox = try Sandbox()
        try server.route("a", Lists.route(entries: [Lists.entry("api.example.com", 1)]))
        let parent = sandbox.root.appendingPathComponent("open")
        let cache = parent.appendingPathComponent("cache")
        try FileManager.default.createDirectory(at: cache, withIntermediateDirectories: true)
        chmod(parent.path, 0o777)
        let config = try sandbox.writeConfig([("a", server.url("a"), "challenge")], cacheDirectory: cache.path)
        expectRefused(
            config, server,
            [
                "cache directory \(cache.path)", "\(parent.path) is writable by other users",
                "sticky",
            ])
    }

    /// A combining mark at the start of a name joins the "/" before it into one Character: a
    /// split by Character skipped that "/", and with it the check of the directory above.
    @Test("a parent that others may write is found, and missing parents are made, when a name below it starts with a combining mark")
    func combiningMarkAfterASlash() throws {
        let sandbox = try Sandbox()
        let parent = sandbox.root.appendingPathComponent("open")
        let cache = parent.appendingPathComponent("\u{301}inner/cache")
        try FileManager.default.createDirectory(at: cache, withIntermediateDirectories: true)
        chmod(parent.path, 0o777)
        #expect(DataDirectories.othersWritableAncestor(of: cache.path) == parent.path)

        let fresh = sandbox.root.appendingPathComponent("fresh/\u{301}made/cache")
        #expect(throws: Never.self) { try DataDirectories.prepare(fresh.path, key: "cache_directory", role: "cache directory") }
        #expect(mode(fresh) == 0o755 && mode(fresh.deletingLastPathComponent()) == 0o755)
    }

    @Test("a directory of ours below a sticky, world-writable parent (as in /tmp) is accepted")
    func stickyParent() throws {
        let server = try FixtureServer(), sandbox = try Sandbox()
        try server.route("a", Lists.route(entries: [Lists.entry("api.example.com", 1)]))
        let parent = sandbox.root.appendingPathComponent("shared")
        let cache = parent.appendingPathComponent("cache")
        try FileManager.default.createDirectory(at: cache, withIntermediateDirectories: true)
        chmod(parent.path, 0o1777)
        let config = try sandbox.writeConfig([("a", server.url("a"), "challenge")], cacheDirectory: cache.path)
        let result = ChildProcess.run(TestEnvironment.binary, ["update", "--config", config], timeout: 30)
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        #expect(FileManager.default.fileExists(atPath: cache.appendingPathComponent("a.json").path))
    }
}

/// Every write re-checks the directory's owner, not only the check at start.
@Suite("AtomicWriter directory owner")
struct WriterOwnerTests {
    @Test(
        "a directory owned by another user is refused for the cache; the metrics writer accepts it",
        .enabled(if: geteuid() == 0, "skipped: needs root to chown the directory to nobody"))
    func foreignOwnedDirectory() throws {
        let dir = TestEnvironment.temporaryDirectory("owner")
        defer { try? FileManager.default.removeItem(at: dir) }
        #expect(chown(dir.path, 65534, 65534) == 0)
        let error = #expect(throws: FileError.self) { try AtomicWriter().write(Data("x".utf8), to: "a.json", in: dir.path) }
        #expect("\(error!)".contains("owned by uid 65534"), "\(error!)")
        try MetricsFile.writer.write(Data("x".utf8), to: "pinkeeper.prom", in: dir.path)
    }

    @Test(
        "root writes into a system account's directory (the service user's cache) but not a login user's",
        .enabled(if: geteuid() == 0, "skipped: needs root to chown the directory"))
    func rootAndTheServiceUser() throws {
        let dir = TestEnvironment.temporaryDirectory("owner-system")
        defer { try? FileManager.default.removeItem(at: dir) }
        #expect(chown(dir.path, 100, 100) == 0)  // a system account, as the package's `pinkeeper` user is
        try AtomicWriter().write(Data("x".utf8), to: "a.json", in: dir.path)
        #expect(chown(dir.path, 1000, 1000) == 0)  // the first login user
        #expect(throws: FileError.self) { try AtomicWriter().write(Data("y".utf8), to: "a.json", in: dir.path) }
    }
}
