import Foundation
import PinKeeper
@testable import PinKeeperDaemon
import TestSupport
import Testing

/// Merges keep every unexpired pin, so a cache file can grow past the limit every reader enforces
/// although no single response was too large. The publish refuses such a file and leaves the
/// published one in place. The readers' limit itself is 64 MiB; the tests lower the updater's copy
/// of it so that a short list reaches it, through the real fetch, merge and publish.
@Suite("A publish never writes a cache file larger than the readers accept")
struct PublishSizeLimitTests {
    static func entries(_ range: Range<Int>) -> [[String: Any]] {
        range.map { Lists.entry("host\($0).example.com", UInt8($0 + 1)) }
    }

    @Test("the publish limit is the readers' own, not a copy")
    func limitIsTheReaders() {
        #expect(CacheDirectory(path: "/unused").maximumFileSize == CacheReader.maximumFileSize)
    }

    @Test(
        "a merge that outgrows the limit is refused, naming the store, the file, the size, the limit and the remedy; the file stays",
        arguments: [ListMode.challenge, .static])
    func mergeOutgrowsTheLimit(mode: ListMode) async throws {
        let server = try FixtureServer(), sandbox = try Sandbox()
        try server.route("grows", Lists.route(mode: mode.rawValue, entries: Self.entries(0..<3)))
        let store = try sandbox.store("grows", url: server.url("grows"), mode: mode)
        var updater = sandbox.updater()
        #expect(await updater.update(store).result == .ok)
        let before = try #require(sandbox.cacheBytes("grows"))
        let limit = before.count + 200  // room for a pin more, not for twenty
        updater.cache.maximumFileSize = limit

        // The server now lists twenty more names: merged with the three cached, the file outgrows the limit.
        try server.route("grows", Lists.route(mode: mode.rawValue, entries: Self.entries(0..<23)))
        let report = await updater.update(store)
        #expect(report.result == .writeFailed)
        let reason = report.reason ?? ""
        for part in [
            "store 'grows'", sandbox.cacheFile("grows").path, "more than the \(limit) bytes", "left as it was", "max_response_size",
        ] {
            #expect(reason.contains(part), "\(part) missing from: \(reason)")
        }
        #expect(sandbox.cacheBytes("grows") == before, "the published file changed")
        #expect(try CacheReader.read(cacheFile: sandbox.cacheFile("grows").path, store: "grows")?.list.pins.count == 3)
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: sandbox.cache.path).filter { $0.hasPrefix(".") }
        #expect(leftovers.isEmpty, "\(leftovers)")
        #expect(report.pins == 3)
        #expect(sandbox.savedState("grows").lastResult == .writeFailed)

        // The size said is the size of the file: with the readers' limit back, the same merge is published.
        let said = try #require(reason.firstMatch(of: /make a file of (\d+) bytes/).flatMap { Int($0.1) })
        #expect(said > limit)
        updater.cache.maximumFileSize = CacheReader.maximumFileSize
        #expect(await updater.update(store).result == .ok)
        #expect(sandbox.cacheBytes("grows")?.count == said)
    }
}
