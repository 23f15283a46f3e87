import Foundation
import Glibc
@testable import PinKeeperDaemon
import Synchronization
import TestSupport
import Testing

/// Writers into one directory share its fsyncs, and none reports its file durable before a
/// directory fsync begun after its own rename has ended.
@Suite("Directory fsyncs shared by writers")
struct DirectorySyncTests {
    /// The real disk, except that the first fsync of a directory waits until `release()`, and
    /// directory fsyncs after the first return `laterResult` (an errno, or 0 for the real fsync).
    final class HeldDirectoryFileSystem: PassThroughFileSystem {
        private struct State {
            var renames = 0
            /// Per file renamed into place: directory fsyncs begun before its rename.
            var startedBeforeRename: [String: Int] = [:]
            var started = 0
            var finished = 0
            var released = false
        }
        private let real = PosixFileSystem()
        private let state = Mutex(State())
        let laterResult: Int32

        init(laterResult: Int32 = 0) { self.laterResult = laterResult }

        var renames: Int { state.withLock { $0.renames } }
        func startedBeforeRename(of name: String) -> Int? { state.withLock { $0.startedBeforeRename[name] } }
        var started: Int { state.withLock { $0.started } }
        var finished: Int { state.withLock { $0.finished } }
        func release() { state.withLock { $0.released = true } }

        func rename(_ directory: Int32, _ from: String, _ to: String) -> Int32 {
            defer {
                state.withLock { state in
                    state.renames += 1
                    state.startedBeforeRename[to] = state.started
                }
            }
            return real.rename(directory, from, to)
        }

        func fsync(_ fd: Int32) -> Int32 {
            var info = stat()
            guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFDIR else { return real.fsync(fd) }
            let number = state.withLock { state in
                state.started += 1
                return state.started
            }
            defer { state.withLock { $0.finished += 1 } }
            if number == 1 {
                while !state.withLock({ $0.released }) { usleep(5_000) }
            } else if laterResult != 0 {
                errno = laterResult
                return -1
            }
            return real.fsync(fd)
        }
    }

    /// Writes `name` on a thread of its own; the result, and how many directory fsyncs had
    /// finished when the write returned.
    static func write(_ name: String, _ writer: AtomicWriter, in directory: URL, disk: HeldDirectoryFileSystem) async -> (
        Result<Void, FileError>, Int
    ) {
        await BlockingWork.run {
            let result = Result { () throws(FileError) in _ = try writer.write(Data(name.utf8), to: name, in: directory.path) }
            return (result, disk.finished)
        }
    }

    /// One writer holds the first directory fsync; five more rename meanwhile, then it ends.
    static func heldThenFive(_ disk: HeldDirectoryFileSystem, in directory: URL) async -> [(Result<Void, FileError>, Int)] {
        let writer = AtomicWriter(fileSystem: disk)
        return await withTaskGroup(of: (Int, (Result<Void, FileError>, Int)).self) { group in
            group.addTask { (0, await write("first", writer, in: directory, disk: disk)) }
            _ = await eventually(timeout: 20) { disk.started == 1 }
            for index in 1...5 {
                group.addTask { (index, await write("w\(index)", writer, in: directory, disk: disk)) }
            }
            _ = await eventually(timeout: 20) { disk.renames == 6 }
            try? await Task.sleep(for: .milliseconds(100))  // the five reach the shared fsync
            disk.release()
            var results = [(Result<Void, FileError>, Int)?](repeating: nil, count: 6)
            for await (index, result) in group { results[index] = result }
            return results.map { $0! }
        }
    }

    @Test("five writers that rename while a directory fsync runs share the next one", .timeLimit(.minutes(1)))
    func shared() async throws {
        let directory = TestEnvironment.temporaryDirectory("dirsync")
        defer { try? FileManager.default.removeItem(at: directory) }
        let disk = HeldDirectoryFileSystem()
        let results = await Self.heldThenFive(disk, in: directory)

        #expect(results.allSatisfy { (try? $0.0.get()) != nil })
        // Two: the held one, then one for the five (three if one of them had renamed but not yet
        // asked when the held one ended); six without sharing.
        #expect(disk.started <= 3, "\(disk.started) directory fsyncs for six writers")
        // Directory fsyncs run one at a time, so the one begun right after a writer's rename had
        // ended when more had finished than had begun before that rename.
        for (index, name) in ["first", "w1", "w2", "w3", "w4", "w5"].enumerated() {
            let before = try #require(disk.startedBeforeRename(of: name))
            #expect(results[index].1 > before, "\(name) returned before a directory fsync begun after its rename ended")
        }
        for name in ["first", "w1", "w2", "w3", "w4", "w5"] {
            #expect(try String(contentsOf: directory.appendingPathComponent(name), encoding: .utf8) == name)
        }
    }

    @Test("a failed directory fsync fails every writer it covered, and only those", .timeLimit(.minutes(1)))
    func failureReachesEveryCoveredWriter() async throws {
        let directory = TestEnvironment.temporaryDirectory("dirsync")
        defer { try? FileManager.default.removeItem(at: directory) }
        let disk = HeldDirectoryFileSystem(laterResult: EIO)
        let results = await Self.heldThenFive(disk, in: directory)

        #expect((try? results[0].0.get()) != nil, "\(results[0].0)")
        for (result, _) in results.dropFirst() {
            guard case .failure(let error) = result else {
                Issue.record("a writer covered by the failed fsync succeeded")
                continue
            }
            #expect(error.operation == "cannot fsync directory")
            #expect(error.code == EIO)
            #expect(error.afterReplacing, "the rename had put the file in place: it was not left as it was")
        }
    }
}
