import Foundation
import Glibc
@testable import PinKeeperDaemon
import Synchronization
import TestSupport
import Testing

/// A disk whose fsync of a file hangs until `open()`: a stalled device, through the seam.
final class StalledFileSystem: PassThroughFileSystem {
    private struct State {
        var open = false
        var stalled = 0
        var fileFsyncs = 0
    }
    private let real = PosixFileSystem()
    private let state = Mutex(State())

    var stalled: Int { state.withLock { $0.stalled } }
    var fileFsyncs: Int { state.withLock { $0.fileFsyncs } }
    func open() { state.withLock { $0.open = true } }

    func fsync(_ fd: Int32) -> Int32 {
        var info = stat()
        if fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG {
            let hang = state.withLock { state in
                state.fileFsyncs += 1
                guard !state.open else { return false }
                state.stalled += 1
                return true
            }
            // Blocks the calling thread, as fsync on a stalled device does.
            while hang && !state.withLock({ $0.open }) { usleep(5_000) }
            if hang { state.withLock { $0.stalled -= 1 } }
        }
        return real.fsync(fd)
    }
}

extension TestEnvironment {
    /// `Tests/Fixtures/stall-fsync.c`, built once.
    static let fsyncStaller = preloadFixture("stall-fsync")
}

@Suite("Blocking disk work never starves the scheduling loop")
struct StalledDiskTests {
    /// The real binary in a process of its own, so its cooperative pool is its own (two threads
    /// on a two-core machine), with every fsync of a file hanging until the test lets go.
    /// A static list's file is written while its entries are verified: that write hangs too.
    @Test("WATCHDOG=1 keeps its cadence while every store's publish hangs in fsync", arguments: ["challenge", "static"])
    func watchdogWhilePublishesHang(mode: String) throws {
        let server = try FixtureServer(), sandbox = try Sandbox()
        try server.route("list", Lists.route(mode: mode, entries: [Lists.entry("api.example.com", 1)]))
        // More hanging publishes than the pool has threads (on a machine with fewer than 8 cores).
        let ids = (1...8).map { "s\($0)" }
        let config = try sandbox.writeConfig(ids.map { ($0, server.url("list"), mode) })
        let gate = sandbox.root.appendingPathComponent("disk-stalled")
        try Data().write(to: gate)
        let stalls = { (try? String(contentsOfFile: gate.path + ".log", encoding: .utf8)) ?? "" }
        let socket = try NotifySocket()
        let daemon = try DaemonProcess(
            config: config,
            environment: [
                "NOTIFY_SOCKET": socket.address, "WATCHDOG_USEC": "400000",  // a ping every 0.2 s
                "LD_PRELOAD": TestEnvironment.fsyncStaller, "PINKEEPER_TEST_FSYNC_GATE": gate.path,
            ])
        defer { try? FileManager.default.removeItem(at: gate) }

        let deadline = Date().addingTimeInterval(20)
        while stalls().isEmpty && Date() < deadline { _ = socket.receive(timeout: 0.05) }
        try #require(!stalls().isEmpty, "no publish ever reached fsync")
        let stalledAt = Date()
        var pings: [Date] = []
        while Date().timeIntervalSince(stalledAt) < 3, let message = socket.receive(timeout: 3.5 - Date().timeIntervalSince(stalledAt)) {
            if message == "WATCHDOG=1" { pings.append(Date()) }
        }
        let recoveredAt = Date()
        try FileManager.default.removeItem(at: gate)

        // How many publishes hung at once: the running count of "+" and "-".
        let mostAtOnce = stalls().reduce((now: 0, most: 0)) { count, mark in
            let now = count.now + (mark == "+" ? 1 : -1)
            return (now, max(count.most, now))
        }.most
        #expect(mostAtOnce == ids.count, "publishes hanging at once: \(mostAtOnce)")
        let edges = [stalledAt] + pings + [recoveredAt]
        let gaps = zip(edges.dropFirst(), edges).map { $0.timeIntervalSince($1) }
        #expect(pings.count >= 6, "\(pings.count) pings in 3 s")
        #expect(gaps.allSatisfy { $0 < 1 }, "gaps \(gaps)")

        let ready = socket.collect(until: { $0 == "READY=1" }, timeout: 20)
        #expect(ready.last == "READY=1")
        #expect(ids.allSatisfy { FileManager.default.fileExists(atPath: sandbox.cacheFile($0).path) })
        daemon.signal(SIGTERM)
        #expect(daemon.waitForExit(timeout: 5) == 0)
    }

    @Test(
        "a hanging metrics write neither makes the caller wait nor queues writes up: the newest state is written next",
        .timeLimit(.minutes(1)))
    func metricsWriteHangs() async throws {
        let sandbox = try Sandbox()
        let disk = StalledFileSystem()
        let file = sandbox.root.appendingPathComponent("pinkeeper.prom")
        let metrics = MetricsWriter(logger: sandbox.log.logger, writer: AtomicWriter(fileSystem: disk))
        func configuration(stores count: Int) throws -> Configuration {
            sandbox.configuration(
                try ["a", "b", "c"].prefix(count).map { try sandbox.store($0, url: "https://127.0.0.1/\($0)") },
                metricsFile: file.path)
        }
        let (one, two, three) = (try configuration(stores: 1), try configuration(stores: 2), try configuration(stores: 3))

        metrics.request(configuration: one, now: 1)
        #expect(await eventually(timeout: 10) { disk.stalled == 1 }, "the first write never reached fsync")
        let asked = ContinuousClock.now
        metrics.request(configuration: two, now: 2)
        metrics.request(configuration: three, now: 3)
        #expect(ContinuousClock.now - asked < .milliseconds(500))
        disk.open()
        await metrics.settle(within: .seconds(10))

        #expect(try String(contentsOf: file, encoding: .utf8) == StatusReport.collect(configuration: three, now: 3).prometheus())
        #expect(disk.fileFsyncs == 2, "the request for two stores was superseded before it was written")
        #expect(try FileManager.default.contentsOfDirectory(atPath: sandbox.root.path).filter { $0.hasPrefix(".") }.isEmpty)
    }
}
