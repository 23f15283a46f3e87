import Foundation
import Glibc
import TestSupport
import Testing

/// Started as root, `update`, `import` and `run` work as the service user: the owner of the
/// cache directory, or the configured `user`. Everything an unprivileged process needs (the
/// configuration, the test CA, the hook) is copied into a directory of the test's own, so the
/// tests never depend on the clone being reachable by other users.
@Suite(
    "Started as root, pinkeeper works as its service user", .serialized,
    .enabled(if: geteuid() == 0, "needs root: it starts pinkeeper as root and gives directories to uid 4242"))
final class ServiceUserTests {
    static let uid: uid_t = 4242
    let server: FixtureServer
    let base: String
    var cache: String { base + "/cache" }
    var state: String { base + "/state" }
    var out: String { base + "/out" }

    init() throws {
        server = try FixtureServer()
        try server.route("a", Lists.route(entries: [Lists.entry("api.example.com", 1)]))
        base = TestEnvironment.temporaryDirectory("service-user").path
        chmod(base, 0o755)
        for directory in [cache, out] {
            mkdir(directory, 0o755)
            chown(directory, Self.uid, Self.uid)
        }
        try FileManager.default.copyItem(atPath: TestEnvironment.certificate("ca.pem"), toPath: base + "/ca.pem")
        chmod(base + "/ca.pem", 0o644)
        // The hook records who runs it, in a directory only uid 4242 and root can write.
        let hook = "#!/bin/sh\nid -u > '\(out)/uid'; id -g > '\(out)/gid'; id -G > '\(out)/groups'\n"
        try hook.write(toFile: base + "/hook.sh", atomically: false, encoding: .utf8)
        chmod(base + "/hook.sh", 0o755)
    }

    deinit { try? FileManager.default.removeItem(atPath: base) }

    /// The main file, root's: `user` is left out unless given.
    @discardableResult
    func writeConfig(user: String? = nil, mode: String = "challenge", watching: Bool = false) throws -> String {
        var text = "cache_directory = \"\(cache)\"\nstate_directory = \"\(state)\"\n"
        if let user { text += "user = \(user)\n" }
        if watching { text += "watch_configuration = true\n" }
        text += """
            [stores.a]
            url = "\(server.url("a"))"
            public_key = "\(TestEnvironment.publicKey())"
            mode = "\(mode)"
            ca_file = "\(base)/ca.pem"
            on_change = ["\(base)/hook.sh"]

            """
        let path = base + "/pinkeeper.toml"
        try text.write(toFile: path, atomically: false, encoding: .utf8)
        chmod(path, 0o644)
        return path
    }

    func pinkeeper(_ arguments: [String]) -> ChildProcess.Result {
        ChildProcess.run(TestEnvironment.binary, arguments, environment: ["PATH": "/usr/bin:/bin"], timeout: 30)
    }

    static func owner(_ path: String) -> uid_t? {
        var info = stat()
        return lstat(path, &info) == 0 ? info.st_uid : nil
    }

    func hookIdentity() -> [String]? {
        let files = ["uid", "gid", "groups"].map { try? String(contentsOfFile: out + "/" + $0, encoding: .utf8) }
        guard files.allSatisfy({ $0 != nil }) else { return nil }
        return files.map { $0!.trimmingCharacters(in: .whitespacesAndNewlines) }
    }

    /// Every file pinkeeper left in the cache and state directories, and the directories, are 4242's.
    func expectServiceUserOwnsEverything(_ log: String, sourceLocation: SourceLocation = #_sourceLocation) {
        for directory in [cache, state] {
            #expect(Self.owner(directory) == Self.uid, "\(directory): \(log)", sourceLocation: sourceLocation)
            for name in (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? [] {
                #expect(Self.owner(directory + "/" + name) == Self.uid, "\(directory)/\(name)", sourceLocation: sourceLocation)
            }
        }
    }

    @Test("sudo pinkeeper update: the files are the cache directory owner's, and the hook runs as that user with its groups only")
    func update() throws {
        let config = try writeConfig()
        let result = pinkeeper(["update", "--config", config])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(FileManager.default.fileExists(atPath: cache + "/a.json"), "\(result.stderr)")
        for file in [cache + "/a.json", state + "/a.state.json", state + "/a.lock"] {
            #expect(Self.owner(file) == Self.uid, "\(file): \(result.stderr)")
        }
        expectServiceUserOwnsEverything(result.stderr)
        #expect(hookIdentity() == ["4242", "4242", "4242"], "\(result.stderr)")
    }

    @Test("sudo pinkeeper import: the imported file and the state are the service user's, the hook runs as it")
    func importList() throws {
        try server.route("a", Lists.route(mode: "static", entries: [Lists.entry("api.example.com", 1)]))
        let list = base + "/list.json"
        try server.download("a").write(to: URL(fileURLWithPath: list))
        chmod(list, 0o600)  // root's alone: the file is read before the switch
        let config = try writeConfig(mode: "static")
        let result = pinkeeper(["import", "--config", config, "--store", "a", list])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(Self.owner(cache + "/a.json") == Self.uid, "\(result.stderr)")
        expectServiceUserOwnsEverything(result.stderr)
        #expect(hookIdentity() == ["4242", "4242", "4242"], "\(result.stderr)")
        #expect(server.requests("a").count == 1, "only the test's own download of the list")
    }

    @Test("sudo pinkeeper run: the daemon's every id is the service user's, no group or capability of root is left")
    func run() throws {
        let config = try writeConfig()
        let daemon = try DaemonProcess(config: config, environment: ["HOME": "/nonexistent"])
        let deadline = Date().addingTimeInterval(15)
        while hookIdentity() == nil && daemon.isRunning && Date() < deadline { usleep(20_000) }
        let ids = "\(Self.uid)\t\(Self.uid)\t\(Self.uid)\t\(Self.uid)"
        #expect(UnprivilegedTests.statusField(daemon.pid, "Uid") == ids, "\(daemon.stderr)")
        #expect(UnprivilegedTests.statusField(daemon.pid, "Gid") == ids)
        #expect(UnprivilegedTests.statusField(daemon.pid, "Groups") == "")
        #expect(UnprivilegedTests.statusField(daemon.pid, "CapEff") == "0000000000000000")
        #expect(UnprivilegedTests.statusField(daemon.pid, "CapPrm") == "0000000000000000")
        #expect(hookIdentity() == ["4242", "4242", ""] || hookIdentity() == ["4242", "4242", "4242"], "\(daemon.stderr)")
        usleep(300_000)  // the state file is saved just after the publish
        daemon.signal(SIGTERM)
        #expect(daemon.waitForExit(timeout: 5) == 0, "\(daemon.stderr)")
        expectServiceUserOwnsEverything(daemon.stderr)
    }

    @Test("a configuration only root can read: one warning at start naming it, and no reload the watcher took for a change")
    func configurationClosedToTheServiceUser() throws {
        let config = try writeConfig(watching: true)
        chmod(config, 0o600)
        let daemon = try DaemonProcess(config: config, environment: ["HOME": "/nonexistent"])
        let deadline = Date().addingTimeInterval(15)
        while hookIdentity() == nil && daemon.isRunning && Date() < deadline { usleep(20_000) }
        usleep(1_500_000)  // the watcher compares the files with the read once its watches exist
        daemon.signal(SIGTERM)
        #expect(daemon.waitForExit(timeout: 5) == 0, "\(daemon.stderr)")
        let warnings = daemon.stderr.split(separator: "\n").filter { $0.contains("the service user cannot read this configuration file") }
        #expect(warnings.count == 1 && warnings.first?.contains(config) == true, "\(daemon.stderr)")
        #expect(!daemon.stderr.contains("configuration changed; reloading"), "\(daemon.stderr)")
        #expect(!daemon.stderr.contains("reload failed"), "\(daemon.stderr)")
    }

    @Test("what an earlier run as root left (a root's state directory, lock and state files, cache file) is handed over")
    func rootsLeftovers() throws {
        mkdir(state, 0o755)
        for (directory, name) in [(state, "a.lock"), (state, "a.state.json"), (cache, "a.json"), (state, ".a.state.json.tmp-1-x")] {
            _ = FileManager.default.createFile(atPath: directory + "/" + name, contents: Data("{}".utf8))
        }
        // A root's file elsewhere, hard-linked into the service user's directory: never given away.
        let secret = base + "/secret"
        _ = FileManager.default.createFile(atPath: secret, contents: Data("root only".utf8))
        #expect(link(secret, cache + "/b.json") == 0)
        let config = try writeConfig()
        let result = pinkeeper(["update", "--config", config])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(Self.owner(state) == Self.uid)
        for name in ["a.lock", "a.state.json"] { #expect(Self.owner(state + "/" + name) == Self.uid, "\(name)") }
        #expect(Self.owner(cache + "/a.json") == Self.uid)
        #expect(Self.owner(secret) == 0, "a hard link let root give its file away")
    }

    @Test("a root's state directory holding files pinkeeper did not make is refused, not chowned")
    func strangerInRootsDirectory() throws {
        mkdir(state, 0o755)
        _ = FileManager.default.createFile(atPath: state + "/passwd", contents: Data())
        let config = try writeConfig()
        let result = pinkeeper(["update", "--config", config])
        #expect(result.status == 1)
        #expect(result.stderr.split(separator: "\n").count == 1, "\(result.stderr)")
        #expect(
            result.stderr.contains("the state directory \(state) is root's and holds 'passwd', which pinkeeper did not make"),
            "\(result.stderr)")
        #expect(Self.owner(state) == 0 && Self.owner(state + "/passwd") == 0)
        #expect(server.requests("a").isEmpty)
    }

    @Test("a root's cache directory and no user: refused with one line saying what to do; user = \"root\" keeps root")
    func rootsCacheDirectory() throws {
        chown(cache, 0, 0)
        let config = try writeConfig()
        let refused = pinkeeper(["update", "--config", config])
        #expect(refused.status == 1)
        #expect(refused.stderr.split(separator: "\n").count == 1, "\(refused.stderr)")
        for fragment in ["started as root", "the cache directory \(cache), but it is root's", "user = \"pinkeeper\"", "user = \"root\""] {
            #expect(refused.stderr.contains(fragment), "\(fragment): \(refused.stderr)")
        }
        #expect(server.requests("a").isEmpty)
        let daemon = pinkeeper(["run", "--config", config])
        #expect(daemon.status == 73, "\(daemon.stderr)")

        try writeConfig(user: "\"root\"")
        let asRoot = pinkeeper(["update", "--config", config])
        #expect(asRoot.status == 0, "\(asRoot.stderr)")
        #expect(Self.owner(cache + "/a.json") == 0)
        #expect(hookIdentity()?.first == "0", "the root-owned hook in root-owned directories did not run as root: \(asRoot.stderr)")
    }

    @Test("a configured user (a numeric uid, as a string) takes over the root's, empty cache directory")
    func configuredUser() throws {
        chown(cache, 0, 0)
        let config = try writeConfig(user: "\"\(Self.uid)\"")
        #expect(pinkeeper(["check-config", "--config", config]).status == 0)
        let result = pinkeeper(["update", "--config", config])
        #expect(result.status == 0, "\(result.stderr)")
        expectServiceUserOwnsEverything(result.stderr)
        #expect(hookIdentity() == ["4242", "4242", "4242"], "\(result.stderr)")
    }

    @Test("check-config: user must name a user of the user database or be a uid")
    func checkConfig() throws {
        for (value, problem) in [
            ("\"no-such-user-pk\"", "no user named 'no-such-user-pk' in the user database"), ("\"\"", "must be a user name"),
            ("\"4294967295\"", "a numeric uid must be from 0 to 4294967294"), ("4242", "must be a user name"),
            ("true", "must be a user name"),
        ] {
            let config = try writeConfig(user: value)
            let result = pinkeeper(["check-config", "--config", config])
            #expect(result.status == 78, "\(value)")
            #expect(result.stderr.contains("key 'user': \(problem)"), "\(value): \(result.stderr)")
        }
        for value in ["\"root\"", "\"0\"", "\"nobody\"", "\"4242\""] {
            let config = try writeConfig(user: value)
            #expect(pinkeeper(["check-config", "--config", config]).status == 0, "\(value)")
        }
    }
}
