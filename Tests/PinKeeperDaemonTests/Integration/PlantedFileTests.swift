import Foundation
import Glibc
import TestSupport
import Testing
import PinKeeper

/// A FIFO planted at a cache or state path would block a plain open(2) until someone writes to
/// it: every command must refuse it at once instead (docs/cache-format.md, "Nothing planted is followed").
@Suite("Planted FIFOs never block a command")
struct PlantedFileTests {
    private func pinkeeper(_ arguments: [String]) -> ChildProcess.Result {
        ChildProcess.run(TestEnvironment.binary, arguments, timeout: 10)
    }

    @Test("a FIFO at the store's cache file: update fails naming it, status reports it, neither waits")
    func fifoAtCacheFile() throws {
        let server = try FixtureServer(), sandbox = try Sandbox()
        try server.route("a", Lists.route(entries: [Lists.entry("api.example.com", 1)]))
        let config = try sandbox.writeConfig([("a", server.url("a"), "challenge")])
        #expect(mkfifo(sandbox.cacheFile("a").path, 0o644) == 0)

        let update = pinkeeper(["update", "--config", config])
        #expect(!update.timedOut, "update blocked on the FIFO")
        #expect(update.status == 1)
        #expect(update.stdout.hasPrefix("a write-failed pins=0"), "\(update.stdout)")
        #expect(update.stdout.contains(sandbox.cacheFile("a").path))

        let status = pinkeeper(["status", "--config", config, "--json"])
        #expect(!status.timedOut, "status blocked on the FIFO")
        #expect(status.status == 2)
        #expect(status.stdout.contains("is not a regular file"), "\(status.stdout)")
        var info = stat()
        #expect(lstat(sandbox.cacheFile("a").path, &info) == 0 && info.st_mode & S_IFMT == S_IFIFO, "the FIFO was replaced")
    }

    @Test("a FIFO at the store's state file: update publishes without waiting, status says unknown")
    func fifoAtStateFile() throws {
        let server = try FixtureServer(), sandbox = try Sandbox()
        try server.route("a", Lists.route(entries: [Lists.entry("api.example.com", 1)]))
        let config = try sandbox.writeConfig([("a", server.url("a"), "challenge")])
        #expect(mkfifo(sandbox.state.appendingPathComponent("a.state.json").path, 0o644) == 0)

        let update = pinkeeper(["update", "--config", config])
        #expect(!update.timedOut, "update blocked on the FIFO")
        #expect(update.status == 0, "\(update.stdout)\(update.stderr)")
        #expect(update.stderr.contains("cannot save store state"), "\(update.stderr)")
        #expect(try sandbox.published("a").list.pins.count == 1)

        let status = pinkeeper(["status", "--config", config])
        #expect(!status.timedOut, "status blocked on the FIFO")
        #expect(status.status == 1)
        #expect(status.stdout.contains(" unknown "), "\(status.stdout)")
    }
}
