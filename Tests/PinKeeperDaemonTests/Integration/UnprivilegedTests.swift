import Foundation
import Glibc
import TestSupport
import Testing
import PinKeeperDaemon
import PinKeeper

/// The daemon as a container runs it: an arbitrary non-root UID without a user database entry,
/// no capabilities, a read-only root file system with only the cache and state directories
/// writable, and no systemd. The directories' checks stay as strict as on a host; a directory
/// that is still root's, as volumes arrive, is refused with what to do about it.
@Suite(
    "Any UID, no capabilities, a read-only root", .serialized,
    .enabled(if: geteuid() == 0, "needs root: it runs the daemon as uid 4242 in a mount namespace of its own"))
struct UnprivilegedTests {
    let server: FixtureServer
    let sandbox: Sandbox

    init() throws {
        server = try FixtureServer()
        sandbox = try Sandbox()
        try server.route("a", Lists.route(entries: [Lists.entry("api.example.com", 1)]))
    }

    static let uid: uid_t = 4242
    static let withoutPrivileges = [
        "/usr/bin/setpriv", "--reuid=\(uid)", "--regid=\(uid)", "--clear-groups", "--inh-caps=-all", "--bounding-set=-all",
    ]

    /// The rest of the command line in a mount namespace of its own where `/` and `/dev/shm` are
    /// read-only and only `writable` (each bind-mounted onto itself first) can be written.
    static func readOnlyRoot(writable: [String]) -> [String] {
        let binds = writable.map { "mount --bind '\($0)' '\($0)' && " }.joined()
        let script =
            binds + "mount -o remount,bind,ro / && { ! mountpoint -q /dev/shm || mount -o remount,bind,ro /dev/shm; } && exec \"$@\""
        return ["/usr/bin/unshare", "--mount", "--propagation", "private", "/bin/sh", "-c", script, "sh"]
    }

    static func statusField(_ pid: pid_t, _ name: String) -> String? {
        let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
        return status.split(separator: "\n").first { $0.hasPrefix(name + ":") }.map {
            $0.dropFirst(name.count + 1).trimmingCharacters(in: .whitespaces)
        }
    }

    @Test("run as uid 4242 without capabilities on a read-only root: it publishes, and SIGTERM stops it with exit 0 in under 2 s")
    func publishesAsAnyUser() throws {
        for directory in [sandbox.cache, sandbox.state] { #expect(chown(directory.path, Self.uid, Self.uid) == 0) }
        let config = try sandbox.writeConfig([("a", server.url("a"), "challenge")])
        let daemon = try DaemonProcess(
            config: config, environment: ["HOME": "/nonexistent"],
            launcher: Self.readOnlyRoot(writable: [sandbox.cache.path, sandbox.state.path]) + Self.withoutPrivileges)
        let file = sandbox.cacheFile("a").path
        let deadline = Date().addingTimeInterval(15)
        while !FileManager.default.fileExists(atPath: file) && daemon.isRunning && Date() < deadline { usleep(20_000) }
        #expect(Self.statusField(daemon.pid, "Uid")?.hasPrefix("\(Self.uid)\t") == true)
        #expect(Self.statusField(daemon.pid, "CapEff") == "0000000000000000")
        #expect(Self.statusField(daemon.pid, "CapBnd") == "0000000000000000")
        #expect(try sandbox.published("a").list.pins.count == 1, "\(daemon.stderr)")
        var info = stat()
        #expect(stat(file, &info) == 0 && info.st_uid == Self.uid && info.st_mode & 0o7777 == 0o644)
        usleep(300_000)  // the state file is saved just after the publish

        let sent = Date()
        daemon.signal(SIGTERM)
        #expect(daemon.waitForExit(timeout: 5) == 0, "\(daemon.stderr)")
        #expect(Date().timeIntervalSince(sent) < 2)
        #expect(sandbox.savedState("a").lastResult == .ok)
        let lines = LogfmtLine.all(daemon.stderr)
        #expect(lines.contains { $0["event"] == "update-succeeded" && $0["store"] == "a" }, "\(daemon.stderr)")
        #expect(!lines.contains { ["warning", "error", "critical"].contains($0["level"]) }, "\(daemon.stderr)")
    }

    @Test(
        "a directory still root's, as a volume arrives, is refused with what to do in a container",
        arguments: [
            // hostPath DirectoryOrCreate
            (mode_t(0o755), "is not writable by uid 4242, which pinkeeper runs as: it is uid 0 (root)'s, mode 0755"),
            (mode_t(0o777), "is refused: it is uid 0 (root)'s, mode 0777, so others could replace the files in it"),  // emptyDir
        ])
    func rootsDirectory(mode: mode_t, problem: String) throws {
        for directory in [sandbox.cache, sandbox.state] { #expect(chmod(directory.path, mode) == 0) }
        let config = try sandbox.writeConfig([("a", server.url("a"), "challenge")])
        let result = ChildProcess.run(
            Self.withoutPrivileges[0],
            Array(Self.withoutPrivileges.dropFirst()) + [TestEnvironment.binaryForOtherUsers, "run", "--config", config], timeout: 30)
        #expect(result.status == 73, "\(result.stderr)")
        #expect(result.stderr.split(separator: "\n").count == 1, "\(result.stderr)")
        for fragment in [
            "the cache directory \(sandbox.cache.path) \(problem)", "chown it to uid 4242 and chmod it 0755 before pinkeeper starts",
            "init container", "podman's :U on a bind mount",
        ] {
            #expect(result.stderr.contains(fragment), "\(fragment): \(result.stderr)")
        }
        #expect(server.requests("a").isEmpty)
    }
}
