import Foundation
import Glibc
import PinKeeper
@testable import PinKeeperDaemon
import TestSupport
import Testing

/// A disk that fails where a real one would: through the file-system seam.
struct FailingFileSystem: FileSystem {
    /// `directorySync`: only the fsync of a directory, which comes after the rename.
    enum Step: Sendable { case create, write, rename, directorySync }
    var failing: Step
    var code: Int32
    let real = PosixFileSystem()

    func openDirectory(_ path: String) -> Int32 { real.openDirectory(path) }
    func createExclusive(_ directory: Int32, _ name: String, mode: mode_t) -> Int32 {
        failing == .create ? fail() : real.createExclusive(directory, name, mode: mode)
    }
    func write(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> Int {
        failing == .write ? Int(fail()) : real.write(fd, bytes)
    }
    func fsync(_ fd: Int32) -> Int32 {
        var info = stat()
        let isDirectory = fstat(fd, &info) == 0 && info.st_mode & S_IFMT == S_IFDIR
        return failing == .directorySync && isDirectory ? fail() : real.fsync(fd)
    }
    func rename(_ directory: Int32, _ from: String, _ to: String) -> Int32 {
        failing == .rename ? fail() : real.rename(directory, from, to)
    }
    private func fail() -> Int32 {
        errno = code
        return -1
    }
}

@Suite("Publishing faults never damage the published file")
struct PublishFaultTests {
    /// Publishes one good version, then runs `damage` and a second update with new pins.
    private func secondUpdate(
        _ name: String, fileSystem: any FileSystem = PosixFileSystem(),
        damage: (Sandbox) throws -> Void = { _ in }
    ) async throws -> (Sandbox, Data, StoreUpdater.Report) {
        let server = try FixtureServer(), sandbox = try Sandbox()
        try server.route(name, Lists.route(entries: [Lists.entry("api.example.com", 1)]))
        let store = try sandbox.store(name, url: server.url(name))
        #expect(await sandbox.updater().update(store).result == .ok)
        let before = try #require(sandbox.cacheBytes(name))
        try server.route(name, Lists.route(entries: [Lists.entry("api.example.com", 2)]))
        try damage(sandbox)
        let report = await sandbox.updater(fileSystem: fileSystem).update(store)
        return (sandbox, before, report)
    }

    @Test(
        "ENOSPC and EACCES at each step: write-failed, file intact, no temp file left",
        arguments: [(FailingFileSystem.Step.create, EACCES), (.write, ENOSPC), (.rename, EACCES)])
    func diskFailures(step: FailingFileSystem.Step, code: Int32) async throws {
        let (sandbox, before, report) = try await secondUpdate("disk", fileSystem: FailingFileSystem(failing: step, code: code))
        #expect(report.result == .writeFailed)
        #expect(report.reason?.contains(String(cString: strerror(code))) == true, "reason: \(report.reason ?? "")")
        #expect(sandbox.cacheBytes("disk") == before)
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: sandbox.cache.path).filter { $0.hasPrefix(".") }
        #expect(leftovers.isEmpty)
        #expect(sandbox.log.errors(store: "disk").count == 1)
        #expect(sandbox.savedState("disk").retryAt != nil)
    }

    @Test("a directory fsync failing after the rename says the file was replaced, not left as it was, and retries")
    func directorySyncFailsAfterRename() async throws {
        let disk = FailingFileSystem(failing: .directorySync, code: EIO)
        let (sandbox, before, report) = try await secondUpdate("unsynced", fileSystem: disk)
        #expect(report.result == .writeFailed)
        let reason = report.reason ?? ""
        #expect(!reason.contains("left as it was"), "the new file is in place: \(reason)")
        #expect(reason.contains("\(sandbox.cacheFile("unsynced").path) was replaced"), "\(reason)")
        #expect(reason.contains("power loss") && reason.contains(String(cString: strerror(EIO))), "\(reason)")
        #expect(sandbox.cacheBytes("unsynced") != before)
        let published = try sandbox.published("unsynced").list.pins
        #expect(published.map(\.fingerprintBase64).contains(Lists.fingerprint(2)))
        #expect(report.pins == published.count, "readers already use the new pins")
        let state = sandbox.savedState("unsynced")
        #expect(state.lastReason == reason)
        #expect(state.retryAt != nil, "retried, so that the file is written and synced again")
        #expect(sandbox.log.errors(store: "unsynced").count == 1)
    }

    @Test("a state file whose directory fsync fails after the rename is reported saved but perhaps not durable, not lost")
    func stateDirectorySyncFails() async throws {
        let server = try FixtureServer(), sandbox = try Sandbox()
        try server.route("st", Lists.route(entries: [Lists.entry("api.example.com", 1)]))
        var updater = sandbox.updater()
        let disk = FailingFileSystem(failing: .directorySync, code: EIO)
        updater.state = StateDirectory(path: sandbox.state.path, writer: AtomicWriter(fileSystem: disk))
        #expect(await updater.update(try sandbox.store("st", url: server.url("st"))).result == .ok)
        let warnings = sandbox.log.warnings(store: "st").map(\.message)
        #expect(warnings == ["saved store state, but a power loss may undo it; check the file system that holds it"], "\(warnings)")
        guard case .known(let state) = StateDirectory(path: sandbox.state.path).read(store: "st") else {
            Issue.record("the state file is not in place")
            return
        }
        #expect(state.lastResult == .ok)
    }

    @Test(
        "a cache directory writable by other users or by its group is refused",
        arguments: [
            (mode_t(0o777), "writable by its group and other users"), (0o757, "writable by other users"),
            (0o775, "writable by its group"),
        ])
    func writableByOthers(mode: mode_t, reason: String) async throws {
        let (sandbox, before, report) = try await secondUpdate("ww") { chmod($0.cache.path, mode) }
        #expect(report.result == .writeFailed)
        #expect(report.reason?.contains(reason) == true, "\(report.reason ?? "")")
        #expect(sandbox.cacheBytes("ww") == before)
    }

    @Test("a symlink planted at the store's file name is neither followed nor replaced")
    func symlinkAtTarget() async throws {
        let victim = TestEnvironment.temporaryDirectory("victim").appendingPathComponent("secret")
        try Data("do not touch".utf8).write(to: victim)
        let (sandbox, _, report) = try await secondUpdate("link") { sandbox in
            try FileManager.default.removeItem(at: sandbox.cacheFile("link"))
            try FileManager.default.createSymbolicLink(atPath: sandbox.cacheFile("link").path, withDestinationPath: victim.path)
        }
        #expect(report.result == .writeFailed)
        #expect(try String(contentsOf: victim, encoding: .utf8) == "do not touch")
        #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: sandbox.cacheFile("link").path)) == victim.path)
    }

    @Test("a corrupt cache file stays in place through a failed update (readers keep their pins); a verified one replaces it")
    func corruptCacheStaysUntilReplaced() async throws {
        let server = try FixtureServer(), sandbox = try Sandbox()
        try server.route("corrupt", Lists.route(entries: [Lists.entry("api.example.com", 1)]))
        let store = try sandbox.store("corrupt", url: server.url("corrupt"))
        #expect(await sandbox.updater().update(store).result == .ok)
        let reader = try CacheReader(path: sandbox.cacheFile("corrupt").path, store: "corrupt")
        let corrupt = Data("{\"fingerprints\": [tru".utf8)
        try corrupt.write(to: sandbox.cacheFile("corrupt"), options: .atomic)

        // An outage: the update fails, and the corrupt file is neither moved nor replaced.
        try server.route("corrupt", Lists.route(entries: [Lists.entry("api.example.com", 2)], extra: ["status": 503]))
        let failed = await sandbox.updater().update(store)
        #expect(failed.result == .httpError)
        #expect(failed.pins == 0, "the corrupt file's pins do not count")
        #expect(sandbox.cacheBytes("corrupt") == corrupt)
        #expect(
            reader.verdict(host: "api.example.com", fingerprint: Array(Data(repeating: 1, count: 32))) == .trusted,
            "the reader lost its last good pins")
        let warning = try #require(sandbox.log.warnings(store: "corrupt").first)
        #expect(warning.metadata["file"] == sandbox.cacheFile("corrupt").path)

        // A verified update publishes over it atomically; one copy was kept aside for inspection.
        try server.route("corrupt", Lists.route(entries: [Lists.entry("api.example.com", 2)]))
        #expect(await sandbox.updater().update(store).result == .ok)
        #expect(try sandbox.published("corrupt").list.pins.map(\.fingerprintBase64) == [Lists.fingerprint(2)])
        let copies = try FileManager.default.contentsOfDirectory(atPath: sandbox.cache.path).filter {
            $0.hasPrefix("corrupt.json.corrupt-")
        }
        #expect(copies.count == 1, "\(copies)")
        #expect(try Data(contentsOf: sandbox.cache.appendingPathComponent(copies[0])) == corrupt)
    }

    @Test("a cache file of a newer format is never touched: the store fails, saying why, and nothing is fetched")
    func newerFormatUntouched() async throws {
        let server = try FixtureServer(), sandbox = try Sandbox()
        try server.route("newer", Lists.route(entries: [Lists.entry("api.example.com", 1)]))
        let newer = Data(#"{"fingerprints": {"v2": []}, "pinkeeper": {"format": 2, "store": "newer"}}"#.utf8)
        try newer.write(to: sandbox.cacheFile("newer"))
        let report = await sandbox.updater().update(try sandbox.store("newer", url: server.url("newer")))
        #expect(report.result == .writeFailed)
        #expect(report.reason?.contains("cache format 2, newer than this pinkeeper's 1") == true, "\(report.reason ?? "")")
        #expect(report.reason?.contains("downgrade") == true)
        #expect(sandbox.cacheBytes("newer") == newer)
        #expect(try FileManager.default.contentsOfDirectory(atPath: sandbox.cache.path) == ["newer.json"])
        #expect(server.requests("newer").isEmpty)
        #expect(sandbox.savedState("newer").lastResult == .writeFailed)
    }

    @Test("temp files left by a dead writer are removed by the next update")
    func staleTempFiles() async throws {
        let (sandbox, _, report) = try await secondUpdate("stale") { sandbox in
            // pid 2^22+1 exceeds Linux's pid_max, so no live process owns this file.
            try Data("partial".utf8).write(to: sandbox.cache.appendingPathComponent(".stale.json.tmp-4194305-1"))
        }
        #expect(report.result == .ok)
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: sandbox.cache.path).filter { $0.hasPrefix(".") }
        #expect(leftovers.isEmpty)
    }
}
