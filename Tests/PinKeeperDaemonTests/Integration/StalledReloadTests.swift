import Foundation
import Glibc
import TestSupport
import Testing

extension TestEnvironment {
    /// `Tests/Fixtures/stall-open.c`, built once.
    static let openStaller = preloadFixture("stall-open")
}

/// A reload whose configuration file cannot be opened yet, as on a hung network mount or a
/// stalled disk: `Tests/Fixtures/stall-open.c` holds the daemon's `open` of it while a gate file
/// exists. (A FIFO would not do: the configuration is opened with O_NONBLOCK and must be a
/// regular file.) The real binary, so that the pool the read could hold is the child's own.
@Suite("A stalled configuration read never holds up the scheduling loop")
struct StalledReloadTests {
    let server: FixtureServer
    let sandbox: Sandbox
    let gate: URL

    init() throws {
        server = try FixtureServer()
        sandbox = try Sandbox()
        gate = sandbox.root.appendingPathComponent("open-stalled")
        try server.route("a", Lists.route(entries: [Lists.entry("a.example.com", 1)]))
        try server.route("b", Lists.route(entries: [Lists.entry("b.example.com", 2)]))
    }

    private var stalls: String { (try? String(contentsOfFile: gate.path + ".log", encoding: .utf8)) ?? "" }

    /// A daemon with store a, READY, pinging every 0.2 s; then a configuration that adds store b,
    /// the gate closed, and SIGHUP; returns once the daemon's open of the file hangs.
    private func startStalledReload() throws -> (DaemonProcess, NotifySocket) {
        let config = try sandbox.writeConfig([("a", server.url("a"), "challenge")])
        let socket = try NotifySocket()
        let daemon = try DaemonProcess(
            config: config,
            environment: [
                "NOTIFY_SOCKET": socket.address, "WATCHDOG_USEC": "400000",
                "LD_PRELOAD": TestEnvironment.openStaller, "PINKEEPER_TEST_OPEN_PATH": config,
                "PINKEEPER_TEST_OPEN_GATE": gate.path,
            ])
        let ready = socket.collect(until: { $0 == "READY=1" }, timeout: 15)
        try #require(ready.last == "READY=1", "got \(ready)")

        try sandbox.writeConfig([("a", server.url("a"), "challenge"), ("b", server.url("b"), "challenge")])
        try Data().write(to: gate)
        daemon.signal(SIGHUP)
        let deadline = Date().addingTimeInterval(10)
        while stalls.isEmpty && Date() < deadline { usleep(10_000) }
        try #require(stalls == "+", "the reload never opened the configuration: \(stalls)")
        return (daemon, socket)
    }

    @Test("WATCHDOG=1 keeps its cadence while the reload's open hangs; READY=1 once it returns")
    func watchdogWhileConfigurationOpenHangs() throws {
        let (daemon, socket) = try startStalledReload()
        defer { try? FileManager.default.removeItem(at: gate) }
        let stalledAt = Date()
        var pings: [Date] = []
        var others: [String] = []
        while Date().timeIntervalSince(stalledAt) < 3, let message = socket.receive(timeout: 3.5 - Date().timeIntervalSince(stalledAt)) {
            if message == "WATCHDOG=1" { pings.append(Date()) } else { others.append(message) }
        }
        let recoveredAt = Date()
        try FileManager.default.removeItem(at: gate)

        let edges = [stalledAt] + pings + [recoveredAt]
        let gaps = zip(edges.dropFirst(), edges).map { $0.timeIntervalSince($1) }
        #expect(pings.count >= 6, "\(pings.count) pings in 3 s")
        #expect(gaps.allSatisfy { $0 < 1 }, "gaps \(gaps)")
        #expect(!others.contains("READY=1"), "READY=1 before the configuration was read: \(others)")

        let reloaded = socket.collect(until: { $0 == "READY=1" }, timeout: 10)
        #expect(reloaded.last == "READY=1", "got \(reloaded)")
        #expect(stalls == "+-")
        let fetched = socket.collect(until: { $0.hasPrefix("STATUS=2 stores: 2 fresh") }, timeout: 10)
        #expect(fetched.last?.hasPrefix("STATUS=2 stores: 2 fresh") == true, "got \(fetched)")
        daemon.signal(SIGTERM)
        #expect(daemon.waitForExit(timeout: 5) == 0)
    }

    @Test("SIGTERM while the reload's open hangs: STOPPING=1 and exit 0 at once")
    func stopWhileConfigurationOpenHangs() throws {
        let (daemon, socket) = try startStalledReload()
        defer { try? FileManager.default.removeItem(at: gate) }
        let sent = Date()
        daemon.signal(SIGTERM)
        #expect(daemon.waitForExit(timeout: 5) == 0)
        #expect(Date().timeIntervalSince(sent) < 2)
        #expect(socket.collect(until: { $0 == "STOPPING=1" }, timeout: 1).contains("STOPPING=1"))
    }
}
