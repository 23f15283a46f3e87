import Foundation
import Glibc
import PinKeeper
@testable import PinKeeperDaemon
import TestSupport
import Testing

/// A probe pass on a stalled disk, in the real binary (so that the cooperative pool the file
/// work could hold is the child's own): the stall fixtures hold its `open` of the store's cache
/// file, or its fsync of `<store>.probes.json`, for as long as a gate file exists.
@Suite("A probe pass on a stalled disk", .serialized)
struct StalledProbeTests {
    /// Eight targets on the one loopback server: more probes reading the cache file at once than
    /// the pool has threads (on a machine with fewer than 8 cores).
    static let ports = 1001...1008

    /// Store `api` probing `ports`, its pins published as an update verified them (the configured
    /// key's id, the configured url as source), so that start-up fetches nothing.
    private func world(_ label: String) throws -> ProbeWorld {
        let probe = try ProbeWorld(label)
        let targets = Self.ports.map { "\"\(ProbeWorld.name):\($0)\"" }
        let connectTo = Self.ports.map { "\"\(ProbeWorld.name):\($0)\" = \"127.0.0.1:\(probe.server.port)\"" }
        let keys = [
            "probe = [\(targets.joined(separator: ", "))]", "probe_connect_to = { \(connectTo.joined(separator: ", ")) }",
            "probe_ca_file = \"\(probe.pki.pem("root"))\"", "expiration_update_threshold = \"1h\"", "request_timeout = \"5s\"",
        ]
        let url = "https://127.0.0.1:1/list"
        try probe.configure(keys.joined(separator: "\n"), url: url)
        let key = try PublicKey(base64: TestEnvironment.publicKey(1)).id
        var leaf = probe.pin("leaf")
        leaf.key = key
        try probe.world.publish("api", [leaf], source: url, mode: .challenge)
        return probe
    }

    private func recorded(_ probe: ProbeWorld) -> StoreProbes? {
        let file = probe.world.state.appendingPathComponent("api.probes.json")
        return (try? Data(contentsOf: file)).flatMap { try? JSONDecoder().decode(StoreProbes.self, from: $0) }
    }

    private func wait(_ seconds: TimeInterval, until condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while !condition() && Date() < deadline { usleep(20_000) }
        return condition()
    }

    @Test("WATCHDOG=1 keeps its cadence while every probe's read of the store's pins hangs in open")
    func watchdogWhileProbeReadsHang() throws {
        let probe = try world("stalled-read")
        let gate = probe.world.root.appendingPathComponent("open-stalled")
        let stalls = { (try? String(contentsOfFile: gate.path + ".log", encoding: .utf8)) ?? "" }
        defer { try? FileManager.default.removeItem(at: gate) }
        let socket = try NotifySocket()
        let daemon = try DaemonProcess(
            config: probe.world.config.path,
            environment: [
                "NOTIFY_SOCKET": socket.address, "WATCHDOG_USEC": "400000",  // a ping every 0.2 s
                "LD_PRELOAD": TestEnvironment.openStaller, "PINKEEPER_TEST_OPEN_GATE": gate.path,
                "PINKEEPER_TEST_OPEN_PATH": probe.world.cache.appendingPathComponent("api.json").path,
            ])
        let first = wait(20) { recorded(probe)?.targets.count == Self.ports.count }
        try #require(first, "the first probe pass never recorded its targets: \(daemon.stderr)")
        let checked = recorded(probe)?.targets.map(\.checked).min() ?? 0

        // The disk stalls; SIGUSR1 probes every target again (and updates the store, whose
        // read of the same file hangs too, on a thread of its own).
        try Data().write(to: gate)
        usleep(1_100_000)  // the next record's `checked` is a later second
        daemon.signal(SIGUSR1)
        try #require(wait(10) { stalls().count >= 2 }, "the probes never opened the cache file: \(stalls())")
        while socket.receive(timeout: 0) != nil {}  // what was sent before the stall
        let stalledAt = Date()
        var pings: [Date] = []
        while Date().timeIntervalSince(stalledAt) < 3, let message = socket.receive(timeout: 3.5 - Date().timeIntervalSince(stalledAt)) {
            if message == "WATCHDOG=1" { pings.append(Date()) }
        }
        let recoveredAt = Date()
        let stalledReads = stalls().filter { $0 == "+" }.count
        try FileManager.default.removeItem(at: gate)

        #expect(stalledReads > Self.ports.count / 2, "reads hanging at once: \(stalledReads)")
        let edges = [stalledAt] + pings + [recoveredAt]
        let gaps = zip(edges.dropFirst(), edges).map { $0.timeIntervalSince($1) }
        #expect(pings.count >= 6, "\(pings.count) pings in 3 s")
        #expect(gaps.allSatisfy { $0 < 1 }, "gaps \(gaps)")

        // The disk recovers: the pass ends and records every target.
        let again = wait(20) { (recorded(probe)?.targets.map(\.checked).min() ?? 0) > checked }
        #expect(again, "the stalled probe pass never recorded: \(daemon.stderr)")
        #expect(recorded(probe)?.targets.allSatisfy { $0.outcome == .pinned } == true, "\(String(describing: recorded(probe)))")
        daemon.signal(SIGTERM)
        #expect(daemon.waitForExit(timeout: 5) == 0)
    }

    @Test("SIGTERM while the probe results are written: the daemon waits for the write, then exits 0, no temp file left")
    func stopWaitsForProbeRecord() throws {
        let probe = try world("stalled-record")
        let gate = probe.world.root.appendingPathComponent("fsync-stalled")
        let stalls = { (try? String(contentsOfFile: gate.path + ".log", encoding: .utf8)) ?? "" }
        try Data().write(to: gate)
        defer { try? FileManager.default.removeItem(at: gate) }
        let socket = try NotifySocket()
        let daemon = try DaemonProcess(
            config: probe.world.config.path,
            environment: [
                "NOTIFY_SOCKET": socket.address, "LD_PRELOAD": TestEnvironment.fsyncStaller,
                "PINKEEPER_TEST_FSYNC_GATE": gate.path,
            ])
        // The first probe pass's write of api.probes.json is the only file the daemon syncs.
        try #require(wait(20) { stalls() == "+" }, "the probe results were never written: \(stalls()) \(daemon.stderr)")

        daemon.signal(SIGTERM)
        let stopping = socket.collect(until: { $0 == "STOPPING=1" }, timeout: 2)
        #expect(stopping.last == "STOPPING=1", "\(stopping)")
        usleep(300_000)
        #expect(daemon.isRunning, "the daemon exited while it was writing the probe results")
        try FileManager.default.removeItem(at: gate)
        #expect(daemon.waitForExit(timeout: 5) == 0)

        #expect(stalls() == "+-")
        let names = try FileManager.default.contentsOfDirectory(atPath: probe.world.state.path).filter { $0.contains("probes") }
        #expect(names == ["api.probes.json"], "a write left half-done: \(names)")
        #expect(recorded(probe)?.targets.count == Self.ports.count, "\(String(describing: recorded(probe)))")
        #expect(recorded(probe)?.targets.allSatisfy { $0.outcome == .pinned } == true)
    }
}
