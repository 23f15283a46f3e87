import Dispatch
import Foundation
import Glibc
import PinKeeper
import Testing

/// Files an attacker (or an accident) may plant at a cache path: the reader refuses them at once,
/// never waits on them and never follows them.
@Suite("CacheReader: planted FIFOs and symlinks")
struct PlantedFileReaderTests {
    /// Runs `body` on a thread of its own and waits at most two seconds. A body stuck opening the
    /// FIFO at `fifo` is released by opening the FIFO for writing, so a failing test cannot hang.
    private func finishesPromptly(unblocking fifo: String, _ body: @escaping @Sendable () -> Void) -> Bool {
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            body()
            done.signal()
        }
        if done.wait(timeout: .now() + 2) == .success { return true }
        let writer = open(fifo, O_WRONLY | O_NONBLOCK | O_CLOEXEC)
        if writer >= 0 { close(writer) }
        _ = done.wait(timeout: .now() + 5)
        return false
    }

    @Test("a FIFO at the cache path: opening the reader fails at once as unreadable")
    func fifoAtCachePath() throws {
        let fixture = CacheFixture()
        #expect(mkfifo(fixture.path, 0o644) == 0)
        let path = fixture.path
        let outcome = Outcome()
        #expect(
            finishesPromptly(unblocking: path) {
                do throws(CacheReaderError) {
                    _ = try CacheReader(path: path, store: "banking")
                    outcome.set("opened")
                } catch {
                    outcome.set("\(error.kind): \(error.reason)")
                }
            })
        #expect(outcome.value?.hasPrefix("unreadable: is not a regular file") == true, "\(outcome.value ?? "nil")")
    }

    @Test("a FIFO replacing a good file: answers stay on the last good pins, without waiting")
    func fifoReplacingGoodFile() throws {
        let fixture = CacheFixture()
        fixture.publish([Sample.pin("api.example.com", 1)])
        let reader = try CacheReader(path: fixture.path, store: "banking")
        let fifo = fixture.directory.appendingPathComponent(".planted").path
        #expect(mkfifo(fifo, 0o644) == 0)
        #expect(rename(fifo, fixture.path) == 0)
        let outcome = Outcome()
        #expect(
            finishesPromptly(unblocking: fixture.path) {
                outcome.set("\(reader.verdict(host: "api.example.com", fingerprint: Sample.digest(1), now: Sample.now))")
            })
        #expect(outcome.value == "trusted")
        #expect(reader.snapshot().problem?.kind == .unreadable)
    }

    @Test("a FIFO as the fallback file fails at once")
    func fifoAsFallback() throws {
        let fixture = CacheFixture()
        let fallback = fixture.directory.appendingPathComponent("fallback.json").path
        #expect(mkfifo(fallback, 0o644) == 0)
        let outcome = Outcome()
        #expect(
            finishesPromptly(unblocking: fallback) {
                do throws(CacheReaderError) {
                    _ = try CacheReader.readFallback(path: fallback)
                    outcome.set("read")
                } catch {
                    outcome.set("\(error.kind)")
                }
            })
        #expect(outcome.value == "unreadable")
    }

    @Test("a symlink at the cache path is refused, not followed")
    func symlinkAtCachePath() throws {
        let fixture = CacheFixture(store: "elsewhere")
        fixture.publish([Sample.pin("api.example.com", 1)], store: "banking")
        let planted = CacheFixture()
        #expect(symlink(fixture.path, planted.path) == 0)
        let error = #expect(throws: CacheReaderError.self) { try CacheReader(path: planted.path, store: "banking") }
        #expect(error?.kind == .unreadable)
        #expect(error?.reason.contains("symlink") == true)
        #expect(throws: CacheReaderError.self) { try CacheReader.read(cacheFile: planted.path) }
    }
}

/// A value set by another thread.
private final class Outcome: @unchecked Sendable {  // guarded by `lock`
    private let lock = NSLock()
    private var stored: String?
    func set(_ value: String) { lock.withLock { stored = value } }
    var value: String? { lock.withLock { stored } }
}
