import Foundation
import Glibc
@testable import PinKeeperDaemon
import TestSupport
import Testing

/// `private_volumes`: a mount point the configuration lists may be writable by anyone without
/// the sticky bit (a Kubernetes emptyDir is root's, 0777) and still hold pinkeeper's own
/// directories; anything else keeps the rule that such an ancestor is refused. Real mounts, made
/// by `unshare -m` in a mount namespace of the command's own, which ends with it (no cleanup to
/// forget); the tests run as root.
@Suite("Private volumes", .serialized)
struct PrivateVolumeTests {
    let server: FixtureServer
    let sandbox: Sandbox
    /// Where the volume is mounted: a directory of the sandbox (itself under the sticky /tmp).
    let volume: URL

    init() throws {
        server = try FixtureServer()
        sandbox = try Sandbox()
        try server.route("a", Lists.route(entries: [Lists.entry("api.example.com", 1)]))
        volume = sandbox.root.appendingPathComponent("volume")
        try FileManager.default.createDirectory(at: volume, withIntermediateDirectories: true)
        chmod(volume.path, 0o777)  // as an emptyDir: anyone may write it, no sticky bit
    }

    enum Mount: String, CaseIterable {
        /// A file system of its own, as an emptyDir on tmpfs (medium: Memory).
        case tmpfs = "mount -t tmpfs -o mode=0777 tmpfs \"$1\""
        /// The directory bound onto itself: a mount point on the same file system, with the st_dev
        /// of its parent, as an emptyDir on the node's disk is bound into the container.
        case bind = "mount --bind \"$1\" \"$1\" && chmod 0777 \"$1\""
        /// No mount at all: a plain directory, writable by anyone.
        case none = "true"
    }

    /// `pinkeeper ARGS` after `mount` and the shell commands `then` in a new mount namespace;
    /// then the mode and owner of each of `show` (inside the volume, which only that namespace sees).
    /// Off the cooperative pool (`BlockingWork`): the suite waits on child processes for minutes.
    func run(_ mount: Mount, then: String = "true", _ arguments: [String], show: [String] = []) async throws -> ChildProcess.Result {
        let script =
            "\(mount.rawValue) && \(then) || exit 99; shift; \"$@\"; status=$?; "
            + show.map { "stat -c '%n %a %u' \"\($0)\"; " }.joined() + "exit $status"
        let command = ["-m", "--propagation", "private", "/bin/sh", "-c", script, "sh", volume.path, TestEnvironment.binary] + arguments
        return await BlockingWork.run { ChildProcess.run("/usr/bin/unshare", command, timeout: 30) }
    }

    func config(listed: [String], cache: String, state: String? = nil) throws -> String {
        let list = listed.map { "\"\($0)\"" }.joined(separator: ", ")
        return try sandbox.writeConfig(
            [("a", server.url("a"), "challenge")], extra: "private_volumes = [\(list)]", cacheDirectory: cache,
            stateDirectory: state ?? sandbox.state.path)
    }

    @Test(
        "a listed mount point writable by anyone may hold the cache and state directories, which pinkeeper creates",
        arguments: [
            Mount.tmpfs, .bind,
        ])
    func listedMountPoint(_ mount: Mount) async throws {
        let cache = volume.path + "/pins", state = volume.path + "/state"
        let result = try await run(
            mount, ["update", "--config", try config(listed: [volume.path], cache: cache, state: state)], show: [cache, state])
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        #expect(result.stdout.contains("a ok pins=1"), "\(result.stdout)")
        #expect(result.stdout.contains("\(cache) 755 0") && result.stdout.contains("\(state) 755 0"), "\(result.stdout)")
    }

    @Test("the same mount point, not listed: its cache directory is refused as before, and the refusal names private_volumes")
    func unlistedMountPoint() async throws {
        let result = try await run(.tmpfs, ["update", "--config", try config(listed: [], cache: volume.path + "/pins")])
        #expect(result.status == 1)
        #expect(result.stderr.contains("its ancestor \(volume.path) is writable by other users without the sticky bit"), "\(result.stderr)")
        #expect(result.stderr.contains("list it in private_volumes"), "\(result.stderr)")
    }

    @Test("a listed directory that is not a mount point is a configuration error naming the key and the path (exit 78)")
    func listedPlainDirectory() async throws {
        let result = try await run(.none, ["update", "--config", try config(listed: [volume.path], cache: volume.path + "/pins")])
        #expect(result.status == 78, "\(result.stderr)")
        #expect(result.stderr.contains("the private volume \(volume.path) (private_volumes) is not a mount point"), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: volume.path + "/pins"), "nothing is created before the check")
    }

    @Test("a listed directory inside a mount point is no mount point either: refused")
    func listedSubdirectoryOfAMount() async throws {
        let inner = volume.path + "/inner"
        let result = try await run(
            .tmpfs, then: "mkdir -m 0777 \"$1/inner\"", ["update", "--config", try config(listed: [inner], cache: inner + "/pins")])
        #expect(result.status == 78, "\(result.stderr)")
        #expect(result.stderr.contains("the private volume \(inner) (private_volumes) is not a mount point"), "\(result.stderr)")
    }

    @Test("the listed volume itself is never the cache directory: check-config refuses it, and a path resolving to it is refused")
    func volumeItselfAsCache() async throws {
        let arguments = ["check-config", "--config", try config(listed: [volume.path], cache: volume.path + "/")]
        let checked = await BlockingWork.run { ChildProcess.run(TestEnvironment.binary, arguments, timeout: 10) }
        #expect(checked.status == 78)
        #expect(checked.stderr.contains("key 'cache_directory': is the private volume \(volume.path) itself"), "\(checked.stderr)")

        // Spelt another way: refused as a configuration error too, not first when the directory is made.
        let resolved = try await run(.tmpfs, ["update", "--config", try config(listed: [volume.path], cache: volume.path + "/pins/..")])
        #expect(resolved.status == 78, "\(resolved.stderr)")
        #expect(resolved.stderr.contains("key 'cache_directory': is the private volume \(volume.path) itself"), "\(resolved.stderr)")
    }

    @Test("the metrics file's directory inside a listed volume is created by pinkeeper, 0755 (the daemon writes the file there)")
    func metricsDirectory() async throws {
        let metrics = volume.path + "/metrics/pinkeeper.prom"
        let config = try sandbox.writeConfig(
            [("a", server.url("a"), "challenge")],
            extra: "private_volumes = [\"\(volume.path)\"]\nmetrics_file = \"\(metrics)\"", cacheDirectory: volume.path + "/pins")
        let result = try await run(.tmpfs, ["update", "--config", config], show: [volume.path + "/metrics"])
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        #expect(result.stdout.contains("\(volume.path)/metrics 755 0"), "\(result.stdout)")
    }

    @Test("mountinfo's escapes are undone: a mount point with a space is found")
    func mountInfoEscapes() throws {
        let table = sandbox.root.appendingPathComponent("mountinfo")
        try "36 35 98:0 / /srv/a\\040b rw - ext3 /dev/root rw\n37 35 0:5 / /x\\134y rw - tmpfs tmpfs rw\n"
            .write(to: table, atomically: false, encoding: .utf8)
        #expect(MountTable.mountPoints(from: table.path) == ["/srv/a b", "/x\\y"])
    }
}
