import Foundation
import Glibc
import PinKeeper
@testable import PinKeeperDaemon
import Testing

/// The state file is bookkeeping: when it cannot be written, back-off goes on from what the
/// process remembers; when it cannot be read, status says the result is unknown (docs/cache-format.md).
@Suite("State file faults")
struct StateFaultTests {
    @Test("the state file cannot be saved: back-off still grows from the failures counted in memory")
    func backoffSurvivesUnsavableState() async throws {
        let server = try FixtureServer(), sandbox = try Sandbox()
        try server.route("s", Lists.route(entries: [Lists.entry("api.example.com", 1)], extra: ["status": 500]))
        // A directory where the state file belongs: every save fails (rename cannot replace it).
        try FileManager.default.createDirectory(
            at: sandbox.state.appendingPathComponent("s.state.json"),
            withIntermediateDirectories: false)
        let store = try sandbox.store("s", url: server.url("s")) {
            $0.retryMin = 60; $0.retryMax = 3_600
        }
        var delays: [Int64] = []
        for _ in 0..<4 {
            let before = Int64(Date().timeIntervalSince1970)
            let report = await sandbox.updater().update(store)
            #expect(report.result == .httpError)
            delays.append(report.nextAttempt - before)
        }
        // Steps of 60, 120, 240, 480 s with the upper half random: the fourth is at least 240 s.
        #expect(delays[0] <= 61)
        #expect(delays[3] >= 239, "delays \(delays): back-off restarted at the first step")
        #expect(sandbox.log.warnings(store: "s").filter { $0.message.contains("cannot save store state") }.count == 4)
    }

    @Test("a later attempt recorded on disk by another process wins over what could not be saved")
    func diskWinsWhenNewer() throws {
        let sandbox = try Sandbox()
        let blocked = sandbox.state.appendingPathComponent("t.state.json")
        try FileManager.default.createDirectory(at: blocked, withIntermediateDirectories: false)
        let directory = StateDirectory(path: sandbox.state.path)
        var unsaved = StoreState()
        unsaved.lastAttempt = 1_000
        unsaved.consecutiveFailures = 3
        #expect(throws: FileError.self) { try directory.save(unsaved, store: "t") }
        #expect(directory.load(store: "t").consecutiveFailures == 3)

        // Another process (say a manual `pinkeeper update`) records a later attempt.
        try FileManager.default.removeItem(at: blocked)
        var later = StoreState()
        later.lastAttempt = 2_000
        later.lastResult = .ok
        try JSONEncoder().encode(later).write(to: blocked)
        #expect(directory.load(store: "t") == later)

        // An older record on disk does not undo a later attempt this process could not save.
        var newest = later
        newest.lastAttempt = 3_000
        newest.consecutiveFailures = 5
        #expect(throws: FileError.self) {
            try StateDirectory(path: sandbox.state.path, writer: AtomicWriter(fileSystem: FailingFileSystem(failing: .rename, code: EIO)))
                .save(newest, store: "t")
        }
        #expect(directory.load(store: "t") == newest)
        #expect(StateDirectory(path: sandbox.state.path).read(store: "t") == .known(later))
    }
}
