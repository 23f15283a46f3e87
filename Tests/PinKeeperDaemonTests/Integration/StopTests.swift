import Foundation
import Glibc
import TestSupport
import Testing

/// How the daemon is started: as a plain child without systemd (no NOTIFY_SOCKET), or as the
/// image starts it, under tini as PID 1 of a PID namespace of its own.
enum InitProcess: String, CaseIterable, CustomTestStringConvertible {
    case none, tini

    static let tiniPath = "/usr/bin/tini"
    static var available: [InitProcess] {
        geteuid() == 0 && FileManager.default.isExecutableFile(atPath: tiniPath) ? allCases : [.none]
    }

    var testDescription: String { self == .none ? "no init" : "tini as PID 1" }

    /// In a new PID namespace (and a mount namespace for its /proc), with tini as its PID 1 or without.
    static func pidNamespace(tini: Bool) -> [String] {
        ["/usr/bin/unshare", "--pid", "--fork", "--mount-proc"] + (tini ? [tiniPath, "--"] : [])
    }

    var launcher: [String] { self == .tini ? Self.pidNamespace(tini: true) : [] }

    /// The process to signal: the namespace's PID 1 (unshare ignores SIGTERM while it waits).
    func signalTarget(_ daemon: DaemonProcess) -> pid_t {
        self == .none ? daemon.pid : ProcessTree.waitForChild(of: daemon.pid) ?? daemon.pid
    }
}

/// Children and states from /proc, as seen from outside the namespace.
enum ProcessTree {
    static func children(of pid: pid_t) -> [pid_t] {
        let text = (try? String(contentsOfFile: "/proc/\(pid)/task/\(pid)/children", encoding: .utf8)) ?? ""
        return text.split(separator: " ").compactMap { pid_t($0) }
    }

    static func waitForChild(of pid: pid_t) -> pid_t? {
        let deadline = Date().addingTimeInterval(5)
        while children(of: pid).isEmpty && Date() < deadline { usleep(10_000) }
        return children(of: pid).first
    }

    /// The one-letter state of /proc/PID/stat (after the parenthesised command name).
    static func state(_ pid: pid_t) -> Character? {
        let stat = (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)) ?? ""
        guard let close = stat.lastIndex(of: ")") else { return nil }
        return stat[stat.index(after: close)...].first { $0 != " " }
    }
}

/// SIGTERM ends `pinkeeper run` with exit status 0 within 2 s whatever it is doing, without
/// systemd: mid-download, mid-hook (one that ignores SIGTERM too), mid-probe.
@Suite("SIGTERM without systemd, mid-work", .serialized)
struct StopTests {
    enum Work: String, CaseIterable, CustomTestStringConvertible {
        case download, hook, stubbornHook, probe
        var testDescription: String { rawValue }
    }

    static let cases = Work.allCases.flatMap { work in InitProcess.available.map { (work, $0) } }

    @Test("exit 0 in under 2 s", arguments: cases)
    func stops(work: Work, start: InitProcess) throws {
        let server = try FixtureServer(), sandbox = try Sandbox()
        let hook = try HookScript(in: sandbox.root, body: work == .stubbornHook ? "trap '' TERM; sleep 300" : "sleep 300")
        var probe: ProbeWorld?
        var silent: SilentListener?
        let config: String
        switch work {
        case .download:
            try server.route(
                "a",
                Lists.route(entries: [Lists.entry("api.example.com", 1)], extra: ["behavior": "hang_after_headers", "hang_seconds": 30]))
            config = try sandbox.writeConfig([("a", server.url("a"), "challenge")])
        case .hook, .stubbornHook:
            try server.route("a", Lists.route(entries: [Lists.entry("api.example.com", 1)]))
            config = try sandbox.writeConfig([("a", server.url("a"), "challenge")], storeExtra: hook.keys(timeout: "10m"))
        case .probe:
            let world = try ProbeWorld("stop")
            let listener = try SilentListener()
            try world.configure(world.probeKeys(port: listener.port, timeout: "60s"))
            try world.publish([world.pin("leaf")])
            (probe, silent, config) = (world, listener, world.world.config.path)
        }
        let daemon = try DaemonProcess(config: config, launcher: start.launcher)
        let target = start.signalTarget(daemon)

        // Wait until the work is under way.
        let deadline = Date().addingTimeInterval(15)
        switch work {
        case .download: while server.requests("a").isEmpty && Date() < deadline { usleep(20_000) }
        case .hook, .stubbornHook: _ = hook.waitForRuns(1, timeout: 15)
        case .probe: usleep(1_500_000)  // the probe pass starts at once and hangs for its 60 s timeout
        }
        usleep(300_000)
        #expect(daemon.isRunning, "\(daemon.stderr)")

        let sent = Date()
        kill(target, SIGTERM)
        let status = daemon.waitForExit(timeout: 10)
        let elapsed = Date().timeIntervalSince(sent)
        print(
            "pinkeeper run, SIGTERM mid-\(work.rawValue), \(start.testDescription)"
                + ": exit \(status.map(String.init) ?? "none") after \(Int(elapsed * 1000)) ms"
        )
        #expect(status == 0, "\(daemon.stderr)")
        #expect(elapsed < 2, "took \(elapsed) s")
        #expect(LogfmtLine.all(daemon.stderr).contains { $0["msg"] == "stopping" }, "\(daemon.stderr)")
        if work == .hook || work == .stubbornHook {
            #expect(LogfmtLine.all(daemon.stderr).contains { $0["reason"] == "ended early: pinkeeper is stopping" }, "\(daemon.stderr)")
        }
        withExtendedLifetime((probe, silent)) {}
    }

    @Test(
        "as PID 1, a hook's orphaned child is reaped under tini and left a zombie without it (why the image runs tini)",
        .enabled(if: InitProcess.available.contains(.tini), "needs root and tini (Debian package tini)"),
        arguments: [true, false])
    func orphans(tini: Bool) throws {
        let server = try FixtureServer(), sandbox = try Sandbox()
        let hook = try HookScript(in: sandbox.root, body: "sleep 0.2 &")
        try server.route("a", Lists.route(entries: [Lists.entry("api.example.com", 1)]))
        let config = try sandbox.writeConfig([("a", server.url("a"), "challenge")], storeExtra: hook.keys())
        let daemon = try DaemonProcess(config: config, launcher: InitProcess.pidNamespace(tini: tini))
        let first = try #require(ProcessTree.waitForChild(of: daemon.pid))
        #expect(hook.waitForRuns(1, timeout: 15).count == 1)
        usleep(1_000_000)  // the orphan's sleep has ended

        // The namespace's PID 1 and, under tini, the daemon below it.
        let processes = tini ? [first] + ProcessTree.children(of: first) : [first]
        let zombies = processes.flatMap(ProcessTree.children).filter { ProcessTree.state($0) == "Z" }
        #expect(zombies.count == (tini ? 0 : 1), "zombies \(zombies)")
        kill(first, SIGTERM)
        #expect(daemon.waitForExit(timeout: 5) == 0, "\(daemon.stderr)")
    }

    @Test(
        "under tini as PID 1, SIGHUP and SIGUSR1 reach the daemon and its exit status comes through (78 for a bad configuration)",
        .enabled(if: InitProcess.available.contains(.tini), "needs root and tini (Debian package tini)"))
    func throughTini() throws {
        let server = try FixtureServer(), sandbox = try Sandbox()
        try server.route("a", Lists.route(entries: [Lists.entry("api.example.com", 1)]))
        let config = try sandbox.writeConfig([("a", server.url("a"), "challenge")])
        let socket = try NotifySocket()
        let daemon = try DaemonProcess(config: config, environment: ["NOTIFY_SOCKET": socket.address], launcher: InitProcess.tini.launcher)
        let tini = try #require(ProcessTree.waitForChild(of: daemon.pid))
        #expect(socket.collect(until: { $0.contains("READY=1") }, timeout: 15).last?.contains("READY=1") == true)
        kill(tini, SIGUSR1)  // updates every store now
        #expect(socket.collect(until: { $0.hasPrefix("STATUS=") }, timeout: 10).last?.hasPrefix("STATUS=") == true)
        #expect(server.requests("a").count == 2)
        kill(tini, SIGHUP)
        let reload = socket.collect(until: { $0 == "READY=1" }, timeout: 10)
        #expect(reload.first?.hasPrefix("RELOADING=1") == true && reload.last == "READY=1", "\(reload)")
        kill(tini, SIGTERM)
        #expect(daemon.waitForExit(timeout: 5) == 0, "\(daemon.stderr)")
        #expect(LogfmtLine.all(daemon.stderr).contains { $0["msg"] == "configuration reloaded" }, "\(daemon.stderr)")

        try "bogus = 1\n".write(toFile: config, atomically: true, encoding: .utf8)
        let bad = try DaemonProcess(config: config, launcher: InitProcess.tini.launcher)
        #expect(bad.waitForExit(timeout: 10) == 78, "\(bad.stderr)")
    }
}
