import Foundation
import Glibc
import PinKeeper
import Testing

/// Every way `CacheReader` refuses a file carries its own `code`, and the `kind` it always had.
@Suite("CacheReaderError: a code for each refusal")
struct CacheReaderErrorCodeTests {
    static let metadata = #","pinkeeper":{"format":1,"store":"banking","source":"u","updated":1,"nextUpdate":2}"#

    /// What opening a reader for `banking` on the fixture's file throws.
    private func refusal(_ fixture: CacheFixture, store: String? = "banking") -> CacheReaderError? {
        #expect(throws: CacheReaderError.self) { try CacheReader(path: fixture.path, store: store) }
    }

    @Test("content: not JSON, not a list, not a cache file, a newer format, another store's file")
    func content() throws {
        let cases: [(Data, CacheReaderError.Code)] = [
            (Data("not json".utf8), .notJSON),
            (Sample.document([Sample.entry(expires: "\"x\"")], extra: Self.metadata), .invalidContent),
            (Sample.document([Sample.entry()]), .missingMetadata),
            (
                Sample.document([Sample.entry()], extra: Self.metadata.replacing(#""format":1"#, with: #""format":2"#)),
                .unsupportedFormat
            ),
            (Sample.document([Sample.entry()], extra: Self.metadata.replacing("banking", with: "other")), .wrongStore),
        ]
        for (bytes, code) in cases {
            let fixture = CacheFixture()
            fixture.replace(with: bytes)
            let error = refusal(fixture)
            #expect(error?.code == code, "\(error?.reason ?? "accepted")")
            #expect(error?.kind == .invalid)
            #expect(error?.path == fixture.path)
            #expect(throws: CacheReaderError.self) { try CacheReader.read(cacheFile: fixture.path, store: "banking") }
        }
    }

    @Test("what sits at the path: a symlink, a directory, a FIFO, a file too large, an I/O error")
    func files() throws {
        let target = CacheFixture()
        target.publish([Sample.pin("api.example.com", 1)])
        let link = CacheFixture()
        #expect(symlink(target.path, link.path) == 0)
        #expect(refusal(link)?.code == .symlink)
        #expect(refusal(link)?.kind == .unreadable)

        let directory = CacheFixture()
        #expect(mkdir(directory.path, 0o755) == 0)
        #expect(refusal(directory)?.code == .notRegularFile)

        let fifo = CacheFixture()
        #expect(mkfifo(fifo.path, 0o644) == 0)
        #expect(refusal(fifo)?.code == .notRegularFile)
        #expect(refusal(fifo)?.kind == .unreadable)

        // Sparse: 64 MiB and one byte without writing them.
        let large = CacheFixture()
        large.replace(with: Data())
        #expect(truncate(large.path, 64 << 20 + 1) == 0)
        #expect(refusal(large)?.code == .tooLarge)
        #expect(refusal(large)?.kind == .invalid)

        // A path through a regular file: ENOTDIR even for root, who passes every permission check.
        let plain = CacheFixture()
        plain.publish([Sample.pin("api.example.com", 1)])
        let below = try #require(refusalOfPath(plain.path + "/banking.json"))
        #expect(below.code == .ioError(errno: ENOTDIR))
        #expect(below.kind == .unreadable)
        #expect(below.reason.contains(String(cString: strerror(ENOTDIR))))
    }

    private func refusalOfPath(_ path: String) -> CacheReaderError? {
        #expect(throws: CacheReaderError.self) { try CacheReader(path: path) }
    }

    @Test("the fallback file: missing, not JSON, not a list; a symlink to a good one is fine")
    func fallback() throws {
        let fixture = CacheFixture()
        func open(_ path: String) throws(CacheReaderError) {
            _ = try CacheReader(store: "banking", cacheDirectory: fixture.directory.path, fallbackFile: path)
        }
        let cases: [(String, CacheReaderError.Code)] = [
            (fixture.directory.appendingPathComponent("none.json").path, .missing),
            (fixture.write("garbage.json", Data("{".utf8)), .notJSON),
            (fixture.write("number.json", Data(#"{"fingerprints": 3}"#.utf8)), .invalidContent),
        ]
        for (path, code) in cases {
            let error = #expect(throws: CacheReaderError.self) { try open(path) }
            #expect(error?.code == code, "\(error?.reason ?? "accepted")")
            #expect(error?.kind == code.kind)
        }
        #expect(cases.map(\.1.kind) == [.unreadable, .invalid, .invalid])

        let good = fixture.write("good.json", Sample.document([Sample.entry()]))
        let link = fixture.directory.appendingPathComponent("link.json").path
        #expect(symlink(good, link) == 0)
        try open(link)
    }

    @Test("a version that cannot be used is reported by snapshot and refresh with its code")
    func laterVersion() throws {
        let fixture = CacheFixture()
        fixture.publish([Sample.pin("api.example.com", 1)])
        let reader = try CacheReader(path: fixture.path, store: "banking")
        fixture.publish([Sample.pin("api.example.com", 1)], store: "other")
        #expect(reader.snapshot().problem?.code == .wrongStore)
        #expect(throws: CacheReaderError(.wrongStore, fixture.path, "belongs to store 'other', not 'banking'")) {
            try reader.refresh()
        }
    }
}
