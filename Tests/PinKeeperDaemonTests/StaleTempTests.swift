import Foundation
import Glibc
@testable import PinKeeperDaemon
import TestSupport
import Testing

/// A temp file belongs to a live writer unless kill(pid, 0) proves the pid gone: EPERM means
/// the process exists but is another user's, and its file must survive.
@Suite("Stale temp files")
struct StaleTempTests {
    @Test func onlyESRCHMeansTheWriterIsGone() {
        #expect(AtomicWriter.writerIsAlive(killResult: 0, error: 0))
        #expect(AtomicWriter.writerIsAlive(killResult: -1, error: EPERM))
        #expect(!AtomicWriter.writerIsAlive(killResult: -1, error: ESRCH))
    }

    @Test("init's temp file is kept; a temp of a pid that does not exist is removed")
    func realProcesses() throws {
        let dir = TestEnvironment.temporaryDirectory("stale")
        defer { try? FileManager.default.removeItem(at: dir) }
        let prefix = AtomicWriter.tempPrefix(for: "a.json")
        let live = dir.appendingPathComponent(prefix + "1-42")  // pid 1 exists; not ours unless we are root
        let gone = dir.appendingPathComponent(prefix + "\(Int32.max)-42")  // above pid_max, never a process
        for file in [live, gone] { try Data("x".utf8).write(to: file) }
        AtomicWriter.removeStaleTemps(for: "a.json", in: dir.path)
        #expect(FileManager.default.fileExists(atPath: live.path))
        #expect(!FileManager.default.fileExists(atPath: gone.path))
    }
}
