import Foundation
import Glibc
import Testing

/// An idle `pinkeeper run` must not wake up: every wake-up of any of its threads is a context
/// switch in /proc/PID/task/*/status. libdispatch's workqueue monitor, started by the first job
/// on a global queue (Swift's default executor, `Task.sleep`, `dispatch_main`, signal sources),
/// would add one a second for the daemon's whole life.
@Suite("An idle daemon sleeps")
struct IdleWakeupTests {
    @Test(
        "no context switches in 5 s after READY with three stores and no watchdog, watching the configuration or not",
        .timeLimit(.minutes(3)),
        arguments: [false, true])
    func noWakeUps(watching: Bool) async throws {
        let server = try FixtureServer()
        let sandbox = try Sandbox()
        let stores = ["a", "b", "c"]
        for store in stores { try server.route(store, Lists.route(entries: [Lists.entry("\(store).example.com", 1)])) }
        let config = try sandbox.writeConfig(stores.map { ($0, server.url($0), "challenge") }, extra: "watch_configuration = \(watching)")
        let socket = try NotifySocket(abstract: false)
        let daemon = try DaemonProcess(config: config, environment: ["NOTIFY_SOCKET": socket.address])
        let messages = socket.collect(until: { $0.contains("READY=1") }, timeout: 15)
        try #require(messages.last?.contains("READY=1") == true, "got \(messages)")
        try await Task.sleep(for: .seconds(1))  // the pass's transfer and file threads end
        let before = Self.switchesPerThread(of: daemon.pid)
        #expect(before.keys.contains { Self.name(of: $0, in: daemon.pid) == "pinkeeper-watch" } == watching)
        try await Task.sleep(for: .seconds(5))
        let after = Self.switchesPerThread(of: daemon.pid)
        // Per thread, so a thread that ended in the window cannot hide another's wake-ups.
        let woken = after.map { thread, count in (thread, count - (before[thread] ?? 0)) }.filter { $0.1 > 0 }
        #expect(
            woken.map(\.1).reduce(0, +) <= 1,
            "context switches per thread (tid, name, count): \(woken.map { ($0.0, Self.name(of: $0.0, in: daemon.pid), $0.1) })")
        daemon.signal(SIGTERM)
        #expect(daemon.waitForExit(timeout: 5) == 0)
    }

    /// Voluntary plus involuntary context switches of every thread of `pid`, by thread id.
    static func switchesPerThread(of pid: pid_t) -> [String: Int] {
        let tasks = "/proc/\(pid)/task"
        var counts: [String: Int] = [:]
        for thread in (try? FileManager.default.contentsOfDirectory(atPath: tasks)) ?? [] {
            guard let status = try? String(contentsOfFile: "\(tasks)/\(thread)/status", encoding: .utf8) else { continue }
            counts[thread] = status.split(separator: "\n")
                .filter { $0.hasPrefix("voluntary_ctxt_switches:") || $0.hasPrefix("nonvoluntary_ctxt_switches:") }
                .compactMap { $0.split(separator: ":").last.flatMap { Int($0.trimmingCharacters(in: .whitespaces)) } }
                .reduce(0, +)
        }
        return counts
    }

    static func name(of thread: String, in pid: pid_t) -> String {
        ((try? String(contentsOfFile: "/proc/\(pid)/task/\(thread)/comm", encoding: .utf8)) ?? "?")
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
