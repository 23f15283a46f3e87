import Foundation
import Glibc
import Testing
@testable import PinKeeperDaemon

/// One hook run in this process: posix_spawn, captured output, a clean environment, the timeout.
@Suite("Change hook process")
struct HookProcessTests {
    private func run(
        _ script: String, environment: [String] = ["PATH=/usr/bin:/bin"], timeout: Duration = .seconds(10),
        grace: Duration = .milliseconds(300), limit: Int = 4_096
    ) -> HookProcess.Outcome {
        HookProcess.run(
            argv: ["/bin/sh", "-c", script, "hook"], environment: environment, timeout: timeout,
            grace: grace, outputLimit: limit)
    }

    @Test("exit status, both streams, exactly the given environment, / as working directory, stdin empty")
    func basics() {
        let outcome = run(
            "echo out; echo err >&2; pwd; env | sort | tr '\\n' ' '; cat; exit 3",
            environment: ["PATH=/usr/bin:/bin", "PINKEEPER_STORE=a"])
        #expect(outcome.end == .exited(3))
        #expect(!outcome.succeeded && !outcome.timedOut)
        #expect(outcome.stderr.text == "err\n")
        let lines = outcome.stdout.text.split(separator: "\n")
        #expect(lines.first == "out")
        #expect(lines.dropFirst().first == "/")
        // sh adds PWD (and dash nothing else); nothing of this process's environment leaks in.
        let variables = Set((lines.last ?? "").split(separator: " ").map { String($0.split(separator: "=")[0]) })
        #expect(variables.subtracting(["PWD", "SHLVL", "_", "OLDPWD"]) == ["PATH", "PINKEEPER_STORE"], "\(variables)")
    }

    @Test("no descriptor above 2 reaches the hook, not even one opened without close-on-exec")
    func descriptorsClosed() throws {
        let leaky = open("/dev/null", O_RDONLY)  // deliberately inheritable
        try #require(leaky > 2)
        defer { close(leaky) }
        let outcome = run("ls /proc/self/fd")  // ls's own directory descriptor shows too
        let fds = outcome.stdout.text.split(separator: "\n").compactMap { Int32($0) }
        #expect(!fds.contains(leaky), "\(fds)")
        #expect(fds.filter { $0 > 3 }.isEmpty, "\(fds)")
    }

    @Test("signals the daemon ignores are at their default in the hook")
    func signalDefaults() {
        let previous = signal(SIGUSR2, SIG_IGN)  // as a disposition the daemon inherited ignored
        defer { signal(SIGUSR2, previous) }
        let outcome = run("kill -USR2 $$; echo survived")
        #expect(outcome.end == .signalled(SIGUSR2), "\(outcome.stdout.text)")
    }

    @Test("at the timeout the whole process group gets SIGTERM, background children included")
    func timeoutKillsGroup() throws {
        let started = ContinuousClock.now
        let outcome = run("sleep 300 & echo $!; sleep 300", timeout: .milliseconds(400))
        #expect(outcome.timedOut && !outcome.succeeded)
        #expect(outcome.end == .signalled(SIGTERM))
        // Far below the hook's 300 s, and loose enough for a suite that loads both cores.
        #expect(ContinuousClock.now - started < .seconds(20))
        let child = try #require(pid_t(outcome.stdout.text.trimmingCharacters(in: .whitespacesAndNewlines)))
        #expect(Self.isGone(child), "the background child \(child) still runs")
    }

    @Test("a hook that ignores SIGTERM gets SIGKILL after the grace period")
    func killAfterGrace() {
        let started = ContinuousClock.now
        let outcome = run("trap '' TERM; sleep 300 & wait; sleep 300", timeout: .milliseconds(300), grace: .milliseconds(300))
        let took = ContinuousClock.now - started
        #expect(outcome.timedOut)
        #expect(outcome.end == .signalled(SIGKILL))
        #expect(took >= .milliseconds(600) && took < .seconds(20), "\(took)")
    }

    @Test("stopped, a hook that ignores SIGTERM gets SIGKILL after the shorter stop grace, not the timeout's grace")
    func stopGrace() {
        let started = ContinuousClock.now
        let outcome = HookProcess.run(
            argv: ["/bin/sh", "-c", "trap '' TERM; sleep 300", "hook"], environment: ["PATH=/usr/bin:/bin"], timeout: .seconds(300),
            grace: .seconds(30), outputLimit: 100, stopGrace: .milliseconds(400),
            stop: { ContinuousClock.now - started > .milliseconds(200) })
        let took = ContinuousClock.now - started
        #expect(outcome.stopped && !outcome.timedOut)
        #expect(outcome.end == .signalled(SIGKILL))
        #expect(took >= .milliseconds(600) && took < .seconds(5), "\(took)")
    }

    @Test("output beyond the limit is read and counted, never blocking the hook")
    func boundedOutput() {
        let outcome = run("head -c 200000 /dev/zero | tr '\\0' a; echo done >&2", limit: 1_000)
        #expect(outcome.end == .exited(0))
        #expect(outcome.stdout.kept.count == 1_000)
        #expect(outcome.stdout.text.hasSuffix("… (199000 more bytes not logged)"))
        #expect(outcome.stderr.text == "done\n")
    }

    @Test("a program that cannot be started is an outcome, not a crash")
    func notStarted() {
        let outcome = HookProcess.run(
            argv: ["/nonexistent/hook"], environment: [], timeout: .seconds(1),
            grace: .milliseconds(100), outputLimit: 100)
        #expect(outcome.end == .notStarted(ENOENT))
    }

    /// Gone, or a zombie waiting for whoever inherited it.
    static func isGone(_ pid: pid_t, within seconds: Double = 3) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        repeat {
            guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8) else { return true }
            if let close = stat.lastIndex(of: ")"), stat[stat.index(close, offsetBy: 2)] == "Z" { return true }
            usleep(20_000)
        } while Date() < deadline
        return false
    }
}

/// `ChangeHooks.stop`, as a stopping daemon uses it.
@Suite("Change hooks at stop")
struct ChangeHooksStopTests {
    @Test("stop ends a running hook at once, long before its timeout, drops owed runs and starts no more")
    func stopEndsRunningHooks() async throws {
        let log = LogRecorder()
        // Not the root check (a command string is refused as root: HookRootChainTests), only the stop.
        let hooks = ChangeHooks(logger: log.logger, killGrace: .milliseconds(300), checksOwnership: false)
        var policy = UpdatePolicy()
        policy.onChange = ["/bin/sh", "-c", "sleep 300"]
        policy.hookTimeout = 600
        let store = StoreConfig(id: "a", url: "https://example.com/", publicKeys: [], policy: policy)
        hooks.pinsChanged(store, cacheFile: "/nonexistent/a.json", pins: 1)
        hooks.pinsChanged(store, cacheFile: "/nonexistent/a.json", pins: 2)  // owed
        try await Task.sleep(for: .milliseconds(200))
        let started = ContinuousClock.now
        await hooks.stop()
        // Far below the hook's 600 s timeout and 300 s sleep; loose enough for a loaded suite
        // (the full suite on two cores has taken 4.9 s here).
        #expect(ContinuousClock.now - started < .seconds(20))
        hooks.pinsChanged(store, cacheFile: "/nonexistent/a.json", pins: 3)  // ignored now
        try await Task.sleep(for: .milliseconds(200))
        let ends = log.all.filter { $0.message.hasPrefix("change hook") }
        #expect(ends.count == 1, "\(ends)")
        #expect(ends.first?.message == "change hook failed")
        #expect(ends.first?.metadata["reason"] == "ended early: pinkeeper is stopping")
        #expect(ends.first?.metadata["signal"] == "SIGTERM")
    }
}
