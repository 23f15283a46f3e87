import Foundation
import Logging
import PinKeeper
@testable import PinKeeperDaemon
import Testing

/// The daemon's side of probing: journal entries on changes only, results kept in the state
/// directory, and the timetable the loop keeps.
@Suite("Probe runner and schedule")
struct ProbeRunnerTests {
    private func configuration(_ world: ProbeWorld) throws -> Configuration {
        try ConfigLoader.load(path: world.world.config.path, environment: [:])
    }

    @Test("an unpinned host: one error-level journal entry with its MESSAGE_ID and fields; the same outcome again logs nothing")
    func journalOnChange() async throws {
        let probe = try ProbeWorld("runner")
        try probe.configure(probe.probeKeys())
        try probe.publish([Pin(name: ProbeWorld.name, fingerprint: [UInt8](repeating: 3, count: 32), expires: ReaderWorld.future)])
        let config = try configuration(probe)
        let log = LogRecorder()
        let runner = ProbeRunner(configuration: config, logger: log.logger)

        let next = await runner.run(config.stores, concurrency: 2)
        let entries = log.all.filter { $0.metadata["event"]?.hasPrefix("probe-") == true }
        #expect(entries.count == 1)
        let entry = try #require(entries.first)
        #expect(entry.level == .error)
        let journal = JournalEntry(
            level: entry.level, message: entry.message,
            metadata: entry.metadata.mapValues { .string($0) }, file: "", function: "", line: 0)
        #expect(journal["MESSAGE_ID"] == LogEventID.probeUnpinned.messageID)
        #expect(journal["PRIORITY"] == "3")
        #expect(journal["PINKEEPER_STORE"] == "api")
        #expect(journal["PINKEEPER_TARGET"] == "api.example.test:443")
        #expect(journal["PINKEEPER_OUTCOME"] == "unpinned")
        #expect(journal["PINKEEPER_LEAF_FINGERPRINT"] == probe.fingerprint("leaf"))
        #expect(journal["PINKEEPER_LEAF_EXPIRES"] == Timestamp.iso(probe.notAfter("leaf")))

        // Recorded for status, with the next probe time: probe_interval (1 h) minus at most 10 %.
        let saved = ProbeStateDirectory(path: config.stateDirectory).load(store: "api")
        #expect(saved.targets.map(\.outcome) == [.unpinned])
        let planned = try #require(next["api"])
        #expect(saved.next == planned)
        #expect(planned - ReaderWorld.now > 3_200 && planned - ReaderWorld.now <= 3_600)

        _ = await runner.run(config.stores, concurrency: 2)
        #expect(log.all.filter { $0.metadata["event"]?.hasPrefix("probe-") == true }.count == 1)
        #expect(ProbeStateDirectory(path: config.stateDirectory).load(store: "api").targets.first?.since == saved.targets.first?.since)
    }

    // MARK: Schedule

    private func store(_ id: String, targets: [String], interval: Int64 = 3_600) -> StoreConfig {
        var store = StoreConfig(id: id, url: "https://pins.example.com/\(id)", publicKeys: [])
        store.probe = ProbeSettings(targets: targets.map { ProbeTarget(endpoint: Endpoint.parse($0)!) }, interval: interval)
        return store
    }

    private func config(_ stores: [StoreConfig], state: String) -> Configuration {
        Configuration(cacheDirectory: "/nonexistent", stateDirectory: state, metricsFile: nil, stores: stores, sources: [])
    }

    @Test("after a restart a store keeps its planned probe time only if its targets are the recorded ones")
    func restart() throws {
        let world = try ReaderWorld()
        let state = ProbeStateDirectory(path: world.state.path)
        let record = ProbeRecord(target: "a.example.com:443", outcome: .pinned, checked: 100, reason: "")
        try state.save(StoreProbes(next: 5_000, targets: [record]), store: "same")
        try state.save(StoreProbes(next: 5_000, targets: [record]), store: "changed")
        let schedule = ProbeSchedule(
            configuration: config(
                [
                    store("same", targets: ["a.example.com"]),
                    store("changed", targets: ["a.example.com", "b.example.com"]),
                    store("new", targets: ["c.example.com"]),
                    store("none", targets: []),
                ], state: world.state.path),
            state: state, now: 1_000)
        #expect(schedule.due == ["same": 5_000, "changed": 1_000, "new": 1_000])
        #expect(schedule.nextDue == 1_000)
    }

    @Test("a reload probes changed stores now, keeps the others' times and drops stores without targets")
    func reload() throws {
        let world = try ReaderWorld()
        let old = config(
            [
                store("kept", targets: ["a.example.com"]), store("changed", targets: ["b.example.com"]),
                store("dropped", targets: ["c.example.com"]),
            ], state: world.state.path)
        let state = ProbeStateDirectory(path: world.state.path)
        for id in ["kept", "changed", "dropped"] {
            try state.save(
                StoreProbes(
                    next: 9_000,
                    targets: [
                        ProbeRecord(
                            target: old.store(id)!.probe.targets[0].id, outcome: .pinned,
                            checked: 1, reason: "")
                    ]), store: id)
        }
        var schedule = ProbeSchedule(configuration: old, state: state, now: 1_000)
        #expect(schedule.due == ["kept": 9_000, "changed": 9_000, "dropped": 9_000])
        let fresh = config(
            [
                store("kept", targets: ["a.example.com"]), store("changed", targets: ["b.example.com"], interval: 60),
                store("dropped", targets: []),
            ], state: world.state.path)
        schedule.reconfigure(from: old, to: fresh, now: 2_000)
        #expect(schedule.due == ["kept": 9_000, "changed": 2_000])
        schedule.probeNow(now: 3_000)
        #expect(schedule.due == ["kept": 3_000, "changed": 3_000])
        schedule.finished(["kept": StoreProbes(next: 7_000), "gone": StoreProbes(next: 8_000)])
        #expect(schedule.due == ["kept": 7_000, "changed": 3_000])
    }
}
