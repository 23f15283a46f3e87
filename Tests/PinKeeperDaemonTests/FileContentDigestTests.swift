import Foundation
import Glibc
import PinKeeper
@testable import PinKeeperDaemon
import TestSupport
import Testing

/// The one content digest of the configuration snapshots and of a store's `ca_file`.
@Suite("File content digests")
struct FileContentDigestTests {
    let directory = TestEnvironment.temporaryDirectory("file-digest")

    @Test("the content decides, through a symlink; a FIFO, a directory or a missing file has none and is not waited on")
    func contentThroughSymlinks() throws {
        let file = directory.appendingPathComponent("ca.pem"), link = directory.appendingPathComponent("link.pem")
        try "one\n".write(to: file, atomically: false, encoding: .utf8)
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: file)
        let first = FileContentDigest.sha256(ofFile: link.path)
        #expect(first == SHA256.digest(Array("one\n".utf8)))
        try "two\n".write(to: file, atomically: false, encoding: .utf8)
        #expect(FileContentDigest.sha256(ofFile: link.path) != first)
        let fifo = directory.appendingPathComponent("fifo").path
        try #require(mkfifo(fifo, 0o600) == 0)
        #expect(FileContentDigest.sha256(ofFile: fifo) == nil)
        #expect(FileContentDigest.sha256(ofFile: directory.path) == nil)
        #expect(FileContentDigest.sha256(ofFile: directory.appendingPathComponent("missing").path) == nil)
    }

    @Test("past the read limit the size still counts: a file grown beyond it has another digest")
    func sizeBeyondTheLimit() throws {
        let file = directory.appendingPathComponent("big")
        try Data(repeating: 0x41, count: 100).write(to: file)
        let short = FileContentDigest.sha256(ofFile: file.path, readLimit: 10)
        try Data(repeating: 0x41, count: 200).write(to: file)
        #expect(FileContentDigest.sha256(ofFile: file.path, readLimit: 10) != short)
        #expect(FileContentDigest.sha256(ofFile: file.path, readLimit: 1_000) == SHA256.digest([UInt8](repeating: 0x41, count: 200)))
    }
}
