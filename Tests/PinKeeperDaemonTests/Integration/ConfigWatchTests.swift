import Foundation
import Glibc
import TestSupport
import Testing

/// `watch_configuration = true`: the real daemon reloads by itself when its configuration
/// changes, as a ConfigMap volume (kubelet's `..data` swap) or an editor on a host changes it,
/// exactly as on SIGHUP (RELOADING=1, READY=1; a rejected configuration keeps the old one).
@Suite("The daemon watches its configuration", .serialized)
struct ConfigWatchTests {
    let server: FixtureServer
    let sandbox: Sandbox

    init() throws {
        server = try FixtureServer()
        sandbox = try Sandbox()
        for id in ["a", "b"] { try server.route(id, Lists.route(entries: [Lists.entry("\(id).example.com", 1)])) }
    }

    /// `watch`: the value of watch_configuration; nil leaves the key out.
    func main(watch: Bool?) -> String {
        "cache_directory = \"\(sandbox.cache.path)\"\nstate_directory = \"\(sandbox.state.path)\"\n"
            + (watch.map { "watch_configuration = \($0)\n" } ?? "") + Sandbox.userLine
    }

    func store(_ id: String) -> String { sandbox.storeTable((id, server.url(id), "challenge")) }

    func start(_ config: String, arguments: [String] = []) throws -> (DaemonProcess, NotifySocket) {
        let socket = try NotifySocket()
        let daemon = try DaemonProcess(config: config, environment: ["NOTIFY_SOCKET": socket.address], arguments: arguments)
        let ready = socket.collect(until: { $0.contains("READY=1") }, timeout: 15)
        try #require(ready.last?.contains("READY=1") == true, "got \(ready)")
        return (daemon, socket)
    }

    /// The notify messages of one reload that the daemon starts by itself, up to its READY=1.
    func reloaded(_ socket: NotifySocket) -> [String] { socket.collect(until: { $0 == "READY=1" }, timeout: 10) }

    func stop(_ daemon: DaemonProcess) -> [LogfmtLine] {
        daemon.signal(SIGTERM)
        #expect(daemon.waitForExit(timeout: 5) == 0, "\(daemon.stderr)")
        return LogfmtLine.all(daemon.stderr)
    }

    @Test("kubelet swaps ..data to a version that adds a store: it reloads once, without a signal, and publishes the store")
    func kubeletAddsAStore() throws {
        var volume = try KubeletVolume(
            at: sandbox.root.appendingPathComponent("volume"), files: ["pinkeeper.toml": main(watch: true), "stores.d/a.toml": store("a")])
        let (daemon, socket) = try start(volume.configPath)
        try volume.update(["pinkeeper.toml": main(watch: true), "stores.d/a.toml": store("a"), "stores.d/b.toml": store("b")])
        let reload = reloaded(socket)
        #expect(reload.first?.hasPrefix("RELOADING=1") == true && reload.last == "READY=1", "\(reload)")
        let fetched = socket.collect(until: { $0.hasPrefix("STATUS=2 stores: 2 fresh") }, timeout: 10)
        #expect(fetched.last?.hasPrefix("STATUS=2 stores: 2 fresh") == true, "\(fetched)")
        #expect(server.requests("b").count == 1)
        // The old version's removal right after the swap is part of the same change.
        #expect(!socket.collect(until: { _ in false }, timeout: 1.5).contains { $0.hasPrefix("RELOADING=1") })
        let lines = stop(daemon)
        let changed = lines.filter { $0["msg"] == "configuration changed; reloading" }
        #expect(changed.count == 1 && changed.first?["file"] == volume.directory.path + "/..data", "\(changed.map(\.pairs))")
        #expect(lines.filter { $0["msg"] == "configuration reloaded" }.count == 1)
    }

    @Test("kubelet swaps to an invalid version: the old configuration stays and the error is logged; the next valid version applies")
    func kubeletInvalidVersion() throws {
        var volume = try KubeletVolume(
            at: sandbox.root.appendingPathComponent("volume"), files: ["pinkeeper.toml": main(watch: true), "stores.d/a.toml": store("a")])
        let (daemon, socket) = try start(volume.configPath)
        try volume.update(["pinkeeper.toml": main(watch: true), "stores.d/a.toml": "[stores.a]\nurl = \"http://insecure.example\"\n"])
        #expect(reloaded(socket).last == "READY=1")
        #expect(daemon.isRunning)
        daemon.signal(SIGUSR1)  // store "a" is still updated, from the old configuration
        _ = socket.collect(until: { $0.hasPrefix("STATUS=") }, timeout: 10)
        #expect(server.requests("a").count == 2)

        // The watches followed the swap, although the configuration was rejected.
        try volume.update(["pinkeeper.toml": main(watch: true), "stores.d/a.toml": store("a"), "stores.d/b.toml": store("b")])
        #expect(reloaded(socket).last == "READY=1")
        #expect(socket.collect(until: { $0.hasPrefix("STATUS=2 stores: 2 fresh") }, timeout: 10).last?.hasPrefix("STATUS=2") == true)
        let lines = stop(daemon)
        let failed = lines.filter { $0.is("error", "reload failed; keeping the running configuration") }
        #expect(failed.count == 1 && failed.first?["reason"]?.contains("key 'url'") == true, "\(failed.map(\.pairs))")
        #expect(lines.filter { $0["msg"] == "configuration reloaded" }.count == 1)
    }

    @Test(
        """
        on a host: a file renamed over the main file, a new drop-in and one rewritten in place are each noticed\
        ; a burst is one reload; other files are not
        """
    )
    func hostEdits() throws {
        let directory = sandbox.root.appendingPathComponent("etc")
        let dropIns = directory.appendingPathComponent("stores.d")
        try FileManager.default.createDirectory(at: dropIns, withIntermediateDirectories: true)
        let config = directory.appendingPathComponent("pinkeeper.toml").path
        try main(watch: true).write(toFile: config, atomically: false, encoding: .utf8)
        try store("a").write(to: dropIns.appendingPathComponent("a.toml"), atomically: false, encoding: .utf8)
        let (daemon, socket) = try start(config)

        // An editor's save: a new file renamed over the old one.
        try (main(watch: true) + "# edited\n").write(toFile: config + ".new", atomically: false, encoding: .utf8)
        #expect(rename(config + ".new", config) == 0)
        #expect(reloaded(socket).first?.hasPrefix("RELOADING=1") == true)

        // A new drop-in written in place, in several writes: one reload, which adds the store.
        let b = dropIns.appendingPathComponent("b.toml")
        for _ in 0..<5 {
            try store("b").write(to: b, atomically: false, encoding: .utf8)
            usleep(50_000)
        }
        #expect(reloaded(socket).first?.hasPrefix("RELOADING=1") == true)
        #expect(socket.collect(until: { $0.hasPrefix("STATUS=2 stores: 2 fresh") }, timeout: 10).last?.hasPrefix("STATUS=2") == true)
        #expect(server.requests("b").count == 1)

        // Files the configuration does not read: no reload.
        try "x".write(to: dropIns.appendingPathComponent(".b.toml.swp"), atomically: false, encoding: .utf8)
        try "x".write(to: dropIns.appendingPathComponent("notes.txt"), atomically: false, encoding: .utf8)
        try "x".write(to: directory.appendingPathComponent("other.toml"), atomically: false, encoding: .utf8)
        #expect(!socket.collect(until: { _ in false }, timeout: 1.5).contains { $0.hasPrefix("RELOADING=1") })

        // A drop-in rewritten in place: the store's changed URL is fetched.
        try server.route("b2", Lists.route(entries: [Lists.entry("b.example.com", 2)]))
        let handle = try FileHandle(forWritingTo: b)
        try handle.truncate(atOffset: 0)
        try handle.write(contentsOf: Data(sandbox.storeTable(("b", server.url("b2"), "challenge")).utf8))
        try handle.close()
        #expect(reloaded(socket).first?.hasPrefix("RELOADING=1") == true)
        _ = socket.collect(until: { $0.hasPrefix("STATUS=") }, timeout: 10)
        #expect(server.requests("b2").count == 1)

        let lines = stop(daemon)
        #expect(
            lines.filter { $0["msg"] == "configuration changed; reloading" }.compactMap { $0["file"] }
                == [config, b.path, b.path], "\(lines.map(\.pairs))")
    }

    @Test(
        """
        files written before the start but closed after it, as podman kube play fills a ConfigMap volume, and a \
        touch: nothing changed, no reload; a real change then is still noticed
        """
    )
    func unchangedFilesClosedAfterStart() throws {
        let directory = sandbox.root.appendingPathComponent("volume")
        try FileManager.default.createDirectory(at: directory.appendingPathComponent("stores.d"), withIntermediateDirectories: true)
        let config = directory.appendingPathComponent("pinkeeper.toml").path
        let dropIn = directory.appendingPathComponent("stores.d/a.toml").path
        // Written in full, and left open: the IN_CLOSE_WRITE of each comes after the daemon read them.
        let writers = try [(config, main(watch: true)), (dropIn, store("a"))].map { path, text in
            let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
            try #require(descriptor >= 0 && write(descriptor, text, text.utf8.count) == text.utf8.count)
            return descriptor
        }
        let (daemon, socket) = try start(config)
        for descriptor in writers { close(descriptor) }
        #expect(utime(config, nil) == 0)  // IN_ATTRIB, contents unchanged
        #expect(!socket.collect(until: { _ in false }, timeout: 1.5).contains { $0.hasPrefix("RELOADING=1") })

        try (store("a") + "# edited\n").write(toFile: dropIn, atomically: false, encoding: .utf8)
        #expect(reloaded(socket).first?.hasPrefix("RELOADING=1") == true)
        let lines = stop(daemon)
        let changed = lines.filter { $0["msg"] == "configuration changed; reloading" }
        #expect(changed.compactMap { $0["file"] } == [dropIn], "\(changed.map(\.pairs))")
    }

    @Test(
        """
        run --watch-configuration (the image's CMD) watches a configuration without the key, after a reload too\
        ; an explicit watch_configuration = false still turns it off
        """
    )
    func watchConfigurationOption() throws {
        var volume = try KubeletVolume(
            at: sandbox.root.appendingPathComponent("volume"), files: ["pinkeeper.toml": main(watch: nil), "stores.d/a.toml": store("a")])
        let (daemon, socket) = try start(volume.configPath, arguments: ["--watch-configuration"])
        try volume.update(["pinkeeper.toml": main(watch: nil), "stores.d/a.toml": store("a"), "stores.d/b.toml": store("b")])
        #expect(reloaded(socket).first?.hasPrefix("RELOADING=1") == true)
        #expect(socket.collect(until: { $0.hasPrefix("STATUS=2 stores: 2 fresh") }, timeout: 10).last?.hasPrefix("STATUS=2") == true)

        // Still without the key after that reload: still watching. Then the key set to false: that
        // reload applies it, and the next change is not noticed.
        try volume.update(["pinkeeper.toml": main(watch: false), "stores.d/a.toml": store("a"), "stores.d/b.toml": store("b")])
        #expect(reloaded(socket).first?.hasPrefix("RELOADING=1") == true)
        try volume.update(["pinkeeper.toml": main(watch: false), "stores.d/a.toml": store("a")])
        #expect(!socket.collect(until: { _ in false }, timeout: 2).contains { $0.hasPrefix("RELOADING=1") })
        let lines = stop(daemon)
        #expect(lines.filter { $0["msg"] == "configuration changed; reloading" }.count == 2, "\(lines.map(\.pairs))")
    }

    @Test("run --watch-configuration with watch_configuration = false from the start: nothing reloads by itself")
    func watchConfigurationOptionOverruled() throws {
        var volume = try KubeletVolume(
            at: sandbox.root.appendingPathComponent("volume"), files: ["pinkeeper.toml": main(watch: false), "stores.d/a.toml": store("a")])
        let (daemon, socket) = try start(volume.configPath, arguments: ["--watch-configuration"])
        try volume.update(["pinkeeper.toml": main(watch: nil), "stores.d/a.toml": store("a"), "stores.d/b.toml": store("b")])
        #expect(!socket.collect(until: { _ in false }, timeout: 2).contains { $0.hasPrefix("RELOADING=1") })
        let lines = stop(daemon)
        #expect(lines.filter { $0["msg"] == "configuration changed; reloading" }.isEmpty, "\(lines.map(\.pairs))")
    }

    @Test("with watch_configuration = false nothing reloads by itself; a reload that turns it on starts the watching")
    func off() throws {
        var volume = try KubeletVolume(
            at: sandbox.root.appendingPathComponent("volume"), files: ["pinkeeper.toml": main(watch: false), "stores.d/a.toml": store("a")])
        let (daemon, socket) = try start(volume.configPath)
        try volume.update(["pinkeeper.toml": main(watch: true), "stores.d/a.toml": store("a")])
        #expect(!socket.collect(until: { _ in false }, timeout: 2).contains { $0.hasPrefix("RELOADING=1") })

        daemon.signal(SIGHUP)  // applies watch_configuration = true
        #expect(reloaded(socket).last == "READY=1")
        try volume.update(["pinkeeper.toml": main(watch: true), "stores.d/a.toml": store("a"), "stores.d/b.toml": store("b")])
        #expect(reloaded(socket).first?.hasPrefix("RELOADING=1") == true)
        #expect(socket.collect(until: { $0.hasPrefix("STATUS=2 stores: 2 fresh") }, timeout: 10).last?.hasPrefix("STATUS=2") == true)
        let lines = stop(daemon)
        #expect(lines.filter { $0["msg"] == "configuration changed; reloading" }.count == 1)
    }
}
