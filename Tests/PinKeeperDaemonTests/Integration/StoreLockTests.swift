import Foundation
import Glibc
import PinKeeper
@testable import PinKeeperDaemon
import TestSupport
import Testing

/// One writer per store: the running daemon and a manual `pinkeeper update` take turns through
/// `<state_directory>/<store>.lock` (docs/cache-format.md, "One writer per store").
@Suite("Per-store lock")
struct StoreLockTests {
    /// Holds the store's lock the way another pinkeeper process would.
    final class HeldLock: @unchecked Sendable {  // the fd is closed once, by `release`
        private var fd: Int32

        init(_ sandbox: Sandbox, store: String) throws {
            fd = open(sandbox.state.appendingPathComponent("\(store).lock").path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
            guard fd >= 0, flock(fd, LOCK_EX | LOCK_NB) == 0 else { throw FixtureError("cannot take the lock") }
        }

        deinit { release() }

        func release() {
            if fd >= 0 { close(fd) }
            fd = -1
        }
    }

    private func pinkeeper(_ arguments: [String]) -> (ChildProcess.Result, TimeInterval) {
        let started = Date()
        let result = ChildProcess.run(TestEnvironment.binary, arguments, timeout: 30)
        return (result, Date().timeIntervalSince(started))
    }

    @Test("update while another process holds the store: after a bounded wait, busy (exit 1), one line, nothing fetched")
    func busyWhileHeld() throws {
        let server = try FixtureServer(), sandbox = try Sandbox()
        try server.route("a", Lists.route(entries: [Lists.entry("api.example.com", 1)]))
        try server.route("b", Lists.route(entries: [Lists.entry("b.example.com", 2)]))
        let config = try sandbox.writeConfig([("a", server.url("a"), "challenge"), ("b", server.url("b"), "challenge")])
        let held = try HeldLock(sandbox, store: "a")

        let (busy, elapsed) = pinkeeper(["update", "--config", config])
        #expect(busy.status == 1, "\(busy.stdout)\(busy.stderr)")
        let lines = busy.stdout.split(separator: "\n")
        #expect(lines.count == 2)
        #expect(lines.contains { $0.hasPrefix("a busy pins=0") && $0.contains("another pinkeeper process") }, "\(lines)")
        #expect(lines.contains { $0.hasPrefix("b ok pins=1") }, "\(lines)")
        #expect(elapsed >= 4 && elapsed < 15, "waited \(elapsed)s")
        #expect(server.requests("a").isEmpty)
        #expect(!FileManager.default.fileExists(atPath: sandbox.cacheFile("a").path))
        #expect(sandbox.savedState("a").lastAttempt == nil, "a busy store is not an attempt")

        held.release()
        let (free, _) = pinkeeper(["update", "--config", config, "--store", "a"])
        #expect(free.status == 0, "\(free.stdout)")
        #expect(free.stdout.hasPrefix("a ok pins=1"))
    }

    @Test("update waits for a lock released within the wait, then updates")
    func waitsForRelease() throws {
        let server = try FixtureServer(), sandbox = try Sandbox()
        try server.route("a", Lists.route(entries: [Lists.entry("api.example.com", 1)]))
        let config = try sandbox.writeConfig([("a", server.url("a"), "challenge")])
        let held = try HeldLock(sandbox, store: "a")
        Thread.detachNewThread {
            usleep(1_500_000)
            held.release()
        }
        let (result, elapsed) = pinkeeper(["update", "--config", config])
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        #expect(result.stdout.hasPrefix("a ok pins=1"))
        #expect(elapsed >= 1.4, "did not wait: \(elapsed)s")
    }

    @Test("the running daemon and a manual update: the update reports busy while the daemon's fetch hangs")
    func daemonAndManualUpdate() throws {
        let server = try FixtureServer(), sandbox = try Sandbox()
        try server.route(
            "a",
            Lists.route(
                entries: [Lists.entry("api.example.com", 1)],
                extra: ["behavior": "hang_after_headers", "hang_seconds": 20]))
        let config = try sandbox.writeConfig([("a", server.url("a"), "challenge")])
        let daemon = try DaemonProcess(config: config)
        let deadline = Date().addingTimeInterval(15)
        while server.requests("a").isEmpty && Date() < deadline { usleep(20_000) }
        try #require(!server.requests("a").isEmpty, "the daemon never fetched")

        let (manual, elapsed) = pinkeeper(["update", "--config", config, "--force"])
        #expect(manual.status == 1, "\(manual.stdout)\(manual.stderr)")
        #expect(manual.stdout.hasPrefix("a busy "), "\(manual.stdout)")
        #expect(elapsed >= 4, "did not wait: \(elapsed)s")
        #expect(server.requests("a").count == 1, "the manual update fetched while the daemon was updating")
        daemon.signal(SIGTERM)
        #expect(daemon.waitForExit(timeout: 5) == 0)
    }

    @Test("in process: a held lock gives a busy report that records no failure and no back-off")
    func busyReport() async throws {
        let sandbox = try Sandbox()
        let store = try sandbox.store("a", url: "https://127.0.0.1:1/a") { $0.retryMin = 45 }
        let held = try HeldLock(sandbox, store: "a")
        try Data("{]".utf8).write(to: sandbox.cacheFile("a"))
        var updater = sandbox.updater()
        updater.lockWait = .milliseconds(200)
        let before = Int64(Date().timeIntervalSince1970)
        let report = await updater.update(store)
        let after = Int64(Date().timeIntervalSince1970)
        #expect(report.busy)
        #expect(report.nextAttempt >= before + 45 && report.nextAttempt <= after + 45, "retry_min from now")
        #expect(sandbox.savedState("a") == StoreState())
        #expect(sandbox.log.warnings(store: "a").first?.message == "store is busy; trying again later")
        #expect(try FileManager.default.contentsOfDirectory(atPath: sandbox.cache.path) == ["a.json"], "written while busy")
        held.release()
        #expect(await updater.update(store).busy == false)
    }
}
