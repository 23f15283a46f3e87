import Dispatch
import Foundation
import Glibc
import PinKeeper
import Synchronization
import Testing

@Suite("CacheReader: Wultra answers from a published cache file")
struct CacheReaderTests {
    let now = Sample.now

    @Test("trusted, untrusted and empty for a fingerprint")
    func fingerprints() throws {
        let fixture = CacheFixture()
        fixture.publish([Sample.pin("api.example.com", 1), Sample.pin("api.example.com", 2), Sample.pin("cdn.example.com", 3)])
        let reader = try CacheReader(path: fixture.path, store: "banking")
        #expect(reader.verdict(host: "api.example.com", fingerprint: Sample.digest(2), now: now) == .trusted)
        #expect(reader.verdict(host: "api.example.com", fingerprint: Sample.digest(3), now: now) == .untrusted)
        #expect(reader.verdict(host: "other.example.com", fingerprint: Sample.digest(1), now: now) == .empty)
        // ASCII letters fold (DNS names do) and one trailing dot goes: the host's one spelling.
        #expect(reader.verdict(host: "API.example.com", fingerprint: Sample.digest(1), now: now) == .trusted)
        #expect(reader.verdict(host: "api.example.com.", fingerprint: Sample.digest(1), now: now) == .trusted)
        // A spelling without one form is refused, never looked up as another (unlisted) name.
        #expect(reader.verdict(host: "api.example.com..", fingerprint: Sample.digest(1), now: now) == .untrusted)
    }

    @Test("an expired pin is never trusted; a pin is valid through its expires second")
    func expiry() throws {
        let fixture = CacheFixture()
        let expires = now + 100
        fixture.publish([Sample.pin("api.example.com", 1, expires: expires)])
        let reader = try CacheReader(path: fixture.path)
        #expect(reader.verdict(host: "api.example.com", fingerprint: Sample.digest(1), now: expires) == .trusted)
        #expect(reader.verdict(host: "api.example.com", fingerprint: Sample.digest(1), now: expires + 1) == .empty)
        #expect(reader.verdict(host: "api.example.com", fingerprint: Sample.digest(9), now: expires + 1) == .empty)
    }

    @Test("depth: a pin only answers for the certificate at its position")
    func depth() throws {
        let fixture = CacheFixture()
        fixture.publish([Sample.pin("api.example.com", 1, depth: 1)])
        let reader = try CacheReader(path: fixture.path)
        #expect(reader.verdict(host: "api.example.com", fingerprint: Sample.digest(1), depth: 1, now: now) == .trusted)
        #expect(reader.verdict(host: "api.example.com", fingerprint: Sample.digest(1), depth: 0, now: now) == .empty)
        #expect(reader.verdict(host: "api.example.com", fingerprint: Sample.digest(2), depth: 1, now: now) == .untrusted)
    }

    @Test("a DER leaf and a real verified chain: each pin is compared with the certificate at its depth")
    func certificatesAndChains() throws {
        let fixture = CacheFixture()
        let leaf = ReaderCertificates.fingerprint("leaf"), intermediate = ReaderCertificates.fingerprint("intermediate")
        let chain = try Certificate.chain(from: ReaderCertificates.bytes("chain.pem"))
        let ders = chain.map(\.der)
        let future = Int64(Date().timeIntervalSince1970) + 86_400

        fixture.publish([Pin(name: "api.example.com", fingerprint: leaf, expires: future)])
        let reader = try CacheReader(path: fixture.path)
        #expect(reader.verdict(host: "api.example.com", certificateDER: ReaderCertificates.bytes("leaf.der")) == .trusted)
        #expect(reader.verdict(host: "api.example.com", certificateDER: ReaderCertificates.bytes("root.der")) == .untrusted)
        #expect(reader.verdict(host: "api.example.com", verifiedChain: ders) == .trusted)
        #expect(reader.verdict(host: "API.example.com", verifiedChain: chain) == .trusted)  // ASCII case folds

        // Only the intermediate is pinned: the chain is trusted, the leaf alone matches nothing at depth 0.
        fixture.publish([Pin(name: "api.example.com", fingerprint: intermediate, expires: future, depth: 1)])
        #expect(reader.verdict(host: "api.example.com", verifiedChain: chain) == .trusted)
        #expect(reader.verdict(host: "api.example.com", certificateDER: ders[0]) == .empty)
        // A pin deeper than the chain is skipped, not counted as a failed attempt.
        fixture.publish([Pin(name: "api.example.com", fingerprint: leaf, expires: future, depth: 5)])
        #expect(reader.verdict(host: "api.example.com", verifiedChain: ders) == .empty)

        // A leaf without a CN: the host alone decides.
        let noName = try Certificate.chain(from: ReaderCertificates.bytes("nocn.pem"))
        fixture.publish([Pin(name: "api.example.com", fingerprint: SHA256.digest(noName[0].der), expires: future)])
        #expect(noName[0].commonName == nil)
        #expect(reader.verdict(host: "api.example.com", verifiedChain: noName) == .trusted)
        #expect(reader.verdict(host: "www.example.com", verifiedChain: noName) == .empty)
    }

    @Test("expected_common_names: any other name is untrusted, even with no file at all")
    func expectedCommonNames() throws {
        let fixture = CacheFixture()
        let missing = try CacheReader(path: fixture.path, expectedCommonNames: ["api.example.com"])
        #expect(missing.verdict(host: "evil.example.com", fingerprint: Sample.digest(1), now: now) == .untrusted)
        #expect(missing.verdict(host: "api.example.com", fingerprint: Sample.digest(1), now: now) == .empty)

        fixture.publish([Sample.pin("api.example.com", 1), Sample.pin("evil.example.com", 2)])
        let reader = try CacheReader(path: fixture.path, expectedCommonNames: ["api.example.com"])
        #expect(reader.verdict(host: "evil.example.com", fingerprint: Sample.digest(2), now: now) == .untrusted)
        #expect(reader.verdict(host: "api.example.com", fingerprint: Sample.digest(1), now: now) == .trusted)
    }

    @Test("domainsConfig: names that need no pinning are trusted; listed names use their own flag")
    func domainsConfig() throws {
        let fixture = CacheFixture()
        let config = DomainsConfig(
            sslPinningRequiredForUnlisted: false,
            domains: [.init(name: "api.example.com", sslPinningRequired: true)])
        fixture.publish([Sample.pin("api.example.com", 1)], domainsConfig: config)
        let reader = try CacheReader(path: fixture.path)
        #expect(reader.verdict(host: "static.example.com", fingerprint: Sample.digest(7), now: now) == .trusted)
        #expect(reader.verdict(host: "api.example.com", fingerprint: Sample.digest(7), now: now) == .untrusted)
        #expect(reader.verdict(host: "api.example.com", fingerprint: Sample.digest(1), now: now) == .trusted)
    }

    @Test("fallback pins answer after the cached ones and when no file exists; their domainsConfig is ignored")
    func fallback() throws {
        let fixture = CacheFixture()
        let fallbackFile = fixture.write(
            "fallback.json",
            Sample.document(
                [
                    Sample.entry(
                        name: "\"api.example.com\"", fingerprint: "\"\(Data(Sample.digest(5)).base64EncodedString())\"",
                        extra: ",\"signature\":\"\"")
                ],
                extra: ",\"domainsConfig\":{\"sslPinningRequiredForUnlisted\":false,\"domains\":[]}"))
        let reader = try CacheReader(store: "banking", cacheDirectory: fixture.directory.path, fallbackFile: fallbackFile)
        #expect(reader.fallbackPins.count == 1)
        #expect(reader.verdict(host: "api.example.com", fingerprint: Sample.digest(5), now: now) == .trusted)
        #expect(reader.verdict(host: "unlisted.example.com", fingerprint: Sample.digest(5), now: now) == .empty)

        fixture.publish([Sample.pin("api.example.com", 1)])
        #expect(reader.verdict(host: "api.example.com", fingerprint: Sample.digest(1), now: now) == .trusted)
        #expect(reader.verdict(host: "api.example.com", fingerprint: Sample.digest(5), now: now) == .trusted)
        #expect(reader.verdict(host: "api.example.com", fingerprint: Sample.digest(6), now: now) == .untrusted)
    }

    @Test("a missing file means no cached pins; the first publication is picked up without reopening")
    func missingThenPublished() throws {
        let fixture = CacheFixture()
        let reader = try CacheReader(path: fixture.path)
        #expect(reader.snapshot().cache == nil)
        #expect(reader.verdict(host: "api.example.com", fingerprint: Sample.digest(1), now: now) == .empty)
        fixture.publish([Sample.pin("api.example.com", 1)])
        #expect(reader.verdict(host: "api.example.com", fingerprint: Sample.digest(1), now: now) == .trusted)
        try FileManager.default.removeItem(atPath: fixture.path)
        #expect(reader.verdict(host: "api.example.com", fingerprint: Sample.digest(1), now: now) == .empty)
    }

    @Test("an atomic replacement is seen at the next question")
    func reloadsOnReplacement() throws {
        let fixture = CacheFixture()
        fixture.publish([Sample.pin("api.example.com", 1)])
        let reader = try CacheReader(path: fixture.path)
        #expect(reader.verdict(host: "api.example.com", fingerprint: Sample.digest(1), now: now) == .trusted)
        fixture.publish([Sample.pin("api.example.com", 2)])  // same size, new inode
        #expect(reader.verdict(host: "api.example.com", fingerprint: Sample.digest(1), now: now) == .untrusted)
        #expect(reader.verdict(host: "api.example.com", fingerprint: Sample.digest(2), now: now) == .trusted)
    }

    @Test("an unchanged file is not read again: same inode, size and mtime keep the parsed pins")
    func noReparseWhenUnchanged() throws {
        let fixture = CacheFixture()
        fixture.publish([Sample.pin("api.example.com", 1)])
        let reader = try CacheReader(path: fixture.path)
        #expect(reader.verdict(host: "api.example.com", fingerprint: Sample.digest(1), now: now) == .trusted)

        // Rewrite the bytes in place (same inode, same size) and put the old mtime back: a reader that
        // re-parsed would now see pin 2; one that trusts stat keeps pin 1.
        var before = stat()
        #expect(stat(fixture.path, &before) == 0)
        let newer = CacheFile(
            list: PinList(pins: [Sample.pin("api.example.com", 2)]),
            metadata: .init(
                store: "banking", source: "https://pins.example.com/list",
                updated: Sample.now - 60, nextUpdate: Sample.now + 3_600)
        ).encoded()
        #expect(newer.count == Int(before.st_size))
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: fixture.path))
        try handle.write(contentsOf: newer)
        try handle.close()
        var times = [before.st_atim, before.st_mtim]
        #expect(utimensat(AT_FDCWD, fixture.path, &times, 0) == 0)
        #expect(reader.verdict(host: "api.example.com", fingerprint: Sample.digest(1), now: now) == .trusted)

        // Touching the mtime is a change: now the new content is read.
        times = [before.st_atim, timespec(tv_sec: before.st_mtim.tv_sec + 1, tv_nsec: 0)]
        #expect(utimensat(AT_FDCWD, fixture.path, &times, 0) == 0)
        #expect(reader.verdict(host: "api.example.com", fingerprint: Sample.digest(2), now: now) == .trusted)
    }

    @Test("a corrupt replacement keeps the last good pins and reports why; a good one recovers")
    func corruptReplacement() throws {
        let fixture = CacheFixture()
        fixture.publish([Sample.pin("api.example.com", 1)])
        let reader = try CacheReader(path: fixture.path, store: "banking")
        fixture.replace(with: Data("{\"fingerprints\": [".utf8))
        #expect(reader.verdict(host: "api.example.com", fingerprint: Sample.digest(1), now: now) == .trusted)
        let problem = try #require(reader.snapshot().problem)
        #expect(problem.kind == .invalid)
        #expect(problem.path == fixture.path)
        #expect(throws: CacheReaderError.self) { try reader.refresh() }

        fixture.publish([Sample.pin("api.example.com", 3)])
        #expect(reader.verdict(host: "api.example.com", fingerprint: Sample.digest(3), now: now) == .trusted)
        #expect(reader.snapshot().problem == nil)
        try reader.refresh()
    }

    @Test("opening fails on a corrupt file, another store's file, a directory and a bad fallback file")
    func openErrors() throws {
        let fixture = CacheFixture()
        fixture.replace(with: Data("not json".utf8))
        #expect(throws: CacheReaderError.self) { try CacheReader(path: fixture.path) }

        fixture.publish([Sample.pin("api.example.com", 1)], store: "other")
        let wrongStore = #expect(throws: CacheReaderError.self) { try CacheReader(path: fixture.path, store: "banking") }
        #expect(wrongStore?.reason.contains("belongs to store 'other'") == true)
        #expect(wrongStore?.kind == .invalid)
        // Without a store to check, the same file is fine.
        _ = try CacheReader(path: fixture.path)

        // No pinkeeper metadata: a plain Wultra list is not a cache file.
        fixture.replace(with: Sample.document([Sample.entry()]))
        #expect(throws: CacheReaderError.self) { try CacheReader(path: fixture.path) }

        let directory = fixture.directory.appendingPathComponent("dir.json").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let notFile = #expect(throws: CacheReaderError.self) { try CacheReader(path: directory) }
        #expect(notFile?.kind == .unreadable)

        let badFallback = fixture.write("fallback.json", Data("{\"fingerprints\": 3}".utf8))
        #expect(throws: CacheReaderError.self) {
            try CacheReader(store: "banking", cacheDirectory: fixture.directory.path, fallbackFile: badFallback)
        }
        let missing = #expect(throws: CacheReaderError.self) {
            try CacheReader(
                store: "banking", cacheDirectory: fixture.directory.path,
                fallbackFile: fixture.directory.appendingPathComponent("none.json").path)
        }
        #expect(missing?.kind == .unreadable)
    }

    @Test("one reader shared by many threads while the file is replaced gives only consistent answers")
    func concurrentReaders() throws {
        let fixture = CacheFixture()
        fixture.publish([Sample.pin("api.example.com", 1)])
        let reader = try CacheReader(path: fixture.path)
        let now = self.now
        let answers = Answers()
        DispatchQueue.concurrentPerform(iterations: 8) { worker in
            for round in 0..<400 {
                if worker == 0 && round % 20 == 0 {
                    fixture.publish([Sample.pin("api.example.com", UInt8(1 + (round / 20) % 2))])
                }
                answers.add(reader.verdict(host: "api.example.com", fingerprint: Sample.digest(1), now: now))
            }
        }
        // Pin 1 is either the published pin (trusted) or replaced by pin 2 (untrusted); never empty, never a crash.
        #expect(answers.all.isSubset(of: [.trusted, .untrusted]))
        #expect(answers.count == 8 * 400)
    }
}

/// Collects answers from several threads.
private final class Answers: Sendable {
    private let state = Mutex<(Set<Verdict>, Int)>(([], 0))
    func add(_ verdict: Verdict) {
        state.withLock {
            $0.0.insert(verdict); $0.1 += 1
        }
    }
    var all: Set<Verdict> { state.withLock { $0.0 } }
    var count: Int { state.withLock { $0.1 } }
}
