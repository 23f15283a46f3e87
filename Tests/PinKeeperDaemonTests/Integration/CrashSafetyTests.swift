import Foundation
import Glibc
import Synchronization
import PinKeeper
@testable import PinKeeperDaemon
import TestSupport
import Testing

/// The published file is always complete: whatever moment a writer dies at, and however fast
/// a reader re-reads it while new versions are published.
@Suite("Crash safety and torn reads")
struct CrashSafetyTests {
    /// A static list big enough that parsing, verifying and writing take a while.
    private static func bigList(_ count: Int, generation: Int) -> [[String: Any]] {
        (0..<count).map { i in
            var fingerprint = [UInt8](repeating: UInt8(generation & 0xFF), count: 32)
            fingerprint[0] = UInt8(i & 0xFF)
            fingerprint[1] = UInt8(i >> 8)
            return [
                "name": "host\(i).example.com", "fingerprint": Data(fingerprint).base64EncodedString(),
                "expires": Lists.future,
            ]
        }
    }

    @Test("SIGKILL of `update --force` at 100 random moments never leaves a partial file")
    func killedWriters() throws {
        let server = try FixtureServer(), sandbox = try Sandbox()
        let config = try sandbox.writeConfig([("big", server.url("big"), "static")])
        var outcomes = (complete: 0, killedBeforePublish: 0)
        for round in 0..<100 {
            try server.route("big", Lists.route(mode: "static", entries: Self.bigList(400, generation: round % 2)))
            let process = Process()
            process.executableURL = URL(fileURLWithPath: TestEnvironment.binary)
            process.arguments = ["update", "--force", "--config", config]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            usleep(UInt32.random(in: 0...400_000))
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            guard let bytes = sandbox.cacheBytes("big") else { outcomes.killedBeforePublish += 1; continue }
            let cache = try #require(try? CacheFile(json: bytes), "round \(round): the published file is not a complete cache file")
            #expect([400, 800].contains(cache.list.pins.count), "one generation, or both merged")
            outcomes.complete += 1
        }
        // The random delays must have hit both sides of the publish for the test to mean anything.
        #expect(outcomes.complete > 0)
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: sandbox.cache.path).filter { $0.hasPrefix(".big.json.tmp-") }
        let result = ChildProcess.run(TestEnvironment.binary, ["update", "--force", "--config", config], timeout: 60)
        #expect(result.status == 0, "\(result.stderr)")
        let after = try FileManager.default.contentsOfDirectory(atPath: sandbox.cache.path).filter { $0.hasPrefix(".big.json.tmp-") }
        #expect(after.isEmpty, "left over: \(after) (before the clean run: \(leftovers.count))")
    }

    @Test("a reader re-reading in a tight loop during 1,000 publishes never sees a missing, empty or partial file")
    func tornReads() throws {
        let sandbox = try Sandbox()
        let directory = CacheDirectory(path: sandbox.cache.path)
        func version(_ n: Int) -> CacheFile {
            let pins = (0..<(50 + n % 50)).map { i in
                Pin(name: "host\(i).example.com", fingerprint: [UInt8](repeating: UInt8(n & 0xFF), count: 32), expires: Lists.future)
            }
            return CacheFile(
                list: PinList(pins: pins),
                metadata: .init(store: "torn", source: "https://example.com", updated: Int64(n), nextUpdate: Int64(n)))
        }
        try directory.publish(version(0))

        // A thread of its own, so the reader runs truly in parallel with the writer.
        let reader = TightReader(path: sandbox.cacheFile("torn").path)
        for n in 1...1_000 { try directory.publish(version(n)) }
        let (reads, failures) = reader.stop()
        #expect(failures.isEmpty, "\(failures.prefix(5))")
        #expect(reads > 1_000, "the reader only read \(reads) times")
        #expect(try CacheFile(json: Data(contentsOf: sandbox.cacheFile("torn"))).metadata.updated == 1_000)
    }
}

/// Re-reads and parses a file as fast as it can on its own thread until stopped.
private final class TightReader: @unchecked Sendable {  // counters are read only after `done` is signalled
    private let stopping = Atomic<Bool>(false)
    private let done = DispatchSemaphore(value: 0)
    private var reads = 0
    private var failures: [String] = []

    init(path: String) {
        Thread.detachNewThread { [self] in
            while !stopping.load(ordering: .relaxed) {
                reads += 1
                guard let data = FileManager.default.contents(atPath: path) else { failures.append("missing"); continue }
                if data.isEmpty { failures.append("empty"); continue }
                if (try? CacheFile(json: data)) == nil { failures.append("partial (\(data.count) bytes)") }
            }
            done.signal()
        }
    }

    func stop() -> (reads: Int, failures: [String]) {
        stopping.store(true, ordering: .relaxed)
        done.wait()
        return (reads, failures)
    }
}
