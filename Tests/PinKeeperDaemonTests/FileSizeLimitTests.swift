import Foundation
import Glibc
@testable import PinKeeper
import Testing
@testable import PinKeeperDaemon

/// The daemon's own reads of its cache, state and probe files refuse a file larger than any it
/// writes, from its size alone: a huge (here sparse) file planted at the path is never read into
/// memory. `/proc/thread-self/io`'s `rchar` counts the bytes this thread reads (other tests run
/// beside these, on other threads), so it shows that the file was not read, not only that it was
/// refused in the end.
@Suite("The daemon's own files are size-capped")
struct FileSizeLimitTests {
    /// A file of `size` bytes that takes no disk space.
    static func sparseFile(_ path: String, size: Int) throws {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        try #require(fd >= 0, "cannot create \(path)")
        defer { close(fd) }
        try #require(ftruncate(fd, off_t(size)) == 0, "cannot extend \(path)")
    }

    /// Bytes this thread has read so far (page cache included).
    static func bytesRead() throws -> Int {
        let text = try String(contentsOfFile: "/proc/thread-self/io", encoding: .utf8)
        let line = try #require(text.split(separator: "\n").first { $0.hasPrefix("rchar:") })
        return try #require(Int(line.dropFirst("rchar:".count).trimmingCharacters(in: .whitespaces)))
    }

    /// Runs `body` on this thread and checks that it read less than `limit` bytes: far less than
    /// the file it was given.
    static func readingLessThan<T>(_ limit: Int, _ body: () throws -> T, sourceLocation: SourceLocation = #_sourceLocation) throws -> T {
        let before = try bytesRead()
        let result = try body()
        let read = try bytesRead() - before
        #expect(read < limit, "read \(read) bytes of an oversized file", sourceLocation: sourceLocation)
        return result
    }

    @Test func theCacheLimitIsTheReaders() {
        #expect(ReadLimit.cacheFile.bytes == CacheReader.maximumFileSize)
    }

    @Test func anOversizedCacheFileIsCorruptUnreadAndLeftInPlace() throws {
        let sandbox = try Sandbox()
        let path = sandbox.cacheFile("s").path
        try Self.sparseFile(path, size: 4 * ReadLimit.cacheFile.bytes)
        let loaded = try Self.readingLessThan(ReadLimit.cacheFile.bytes) {
            CacheDirectory(path: sandbox.cache.path).load(store: "s", now: 0, keepingCopy: true)
        }
        guard case .corrupt(let reason, let copy) = loaded else { Issue.record("not refused: \(loaded)"); return }
        #expect(reason.contains(path) && reason.contains("64 MiB") && reason.contains("a verified update replaces it"), "\(reason)")
        #expect(copy == nil, "an oversized file is not copied aside")
        var info = stat()
        #expect(stat(path, &info) == 0 && Int(info.st_size) == 4 * ReadLimit.cacheFile.bytes, "the file was changed")
        #expect(try FileManager.default.contentsOfDirectory(atPath: sandbox.cache.path) == ["s.json"])
    }

    @Test func anOversizedStateFileIsUnreadableAndUnread() throws {
        let sandbox = try Sandbox()
        let directory = StateDirectory(path: sandbox.state.path)
        let path = directory.filePath(for: "s")
        try Self.sparseFile(path, size: 4 * ReadLimit.stateFile.bytes)
        let stored = try Self.readingLessThan(ReadLimit.stateFile.bytes) { directory.read(store: "s") }
        guard case .unreadable(let reason) = stored else { Issue.record("not refused: \(stored)"); return }
        #expect(reason.contains(path) && reason.contains("1 MiB") && reason.contains("remove it"), "\(reason)")
        #expect(try Self.readingLessThan(ReadLimit.stateFile.bytes) { directory.load(store: "s") } == StoreState())
    }

    @Test func oversizedProbeResultsAreUnread() throws {
        let sandbox = try Sandbox()
        let directory = ProbeStateDirectory(path: sandbox.state.path)
        try Self.sparseFile("\(sandbox.state.path)/\(directory.fileName(for: "s"))", size: 4 * ReadLimit.probeFile.bytes)
        #expect(try Self.readingLessThan(ReadLimit.probeFile.bytes) { directory.load(store: "s") } == StoreProbes())
    }

    /// The limit is a size no valid file reaches: a file of exactly that size is still read.
    @Test(arguments: [ReadLimit.stateFile, ReadLimit.probeFile])
    func aFileAtTheLimitIsRead(_ limit: ReadLimit) throws {
        let sandbox = try Sandbox()
        let path = sandbox.state.appendingPathComponent("f").path
        try Self.sparseFile(path, size: limit.bytes)
        guard case .success(.read(let data, _)) = readRegularFile(path, limit: limit) else {
            Issue.record("a file of exactly \(limit.bytes) bytes was refused"); return
        }
        #expect(data.count == limit.bytes)
        try Self.sparseFile(path, size: limit.bytes + 1)
        guard case .failure(let error) = readRegularFile(path, limit: limit) else {
            Issue.record("a file of \(limit.bytes + 1) bytes was read"); return
        }
        #expect(error.code == EFBIG && error.path == path, "\(error)")
    }

    /// Never damaging the published file: a failed update leaves it as it was (readers refuse it
    /// too, by the same limit) without copying it aside (a sparse file's copy would fill the disk),
    /// and a verified update replaces it, as it would a corrupt one.
    @Test func anOversizedCacheFileIsReplacedOnlyByAVerifiedUpdate() async throws {
        let server = try FixtureServer(), sandbox = try Sandbox()
        try server.route("s", Lists.route(entries: [Lists.entry("api.example.com", 1)], extra: ["status": 503]))
        let store = try sandbox.store("s", url: server.url("s"))
        let path = sandbox.cacheFile("s").path
        try Self.sparseFile(path, size: 4 * ReadLimit.cacheFile.bytes)

        let failed = await sandbox.updater().update(store)
        #expect(failed.result == .httpError && failed.pins == 0)
        var info = stat()
        #expect(stat(path, &info) == 0 && Int(info.st_size) == 4 * ReadLimit.cacheFile.bytes, "a failed update changed the file")
        #expect(try FileManager.default.contentsOfDirectory(atPath: sandbox.cache.path) == ["s.json"])

        try server.route("s", Lists.route(entries: [Lists.entry("api.example.com", 1)]))
        #expect(await sandbox.updater().update(store).result == .ok)
        #expect(try sandbox.published("s").list.pins.count == 1)
    }
}
