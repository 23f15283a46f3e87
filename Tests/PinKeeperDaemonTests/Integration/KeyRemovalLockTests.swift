import Foundation
import Glibc
import PinKeeper
@testable import PinKeeperDaemon
import TestSupport
import Testing

/// Reconciling a store's file after a key removal is a publish like any other: only the holder
/// of the store's lock may do it, so an update of another process is never overwritten by a
/// reduced copy of an older file. And a reduced file is never re-published from a 304.
extension KeyRemovalTests {
    @Test("pinkeeper update: while another process holds the store, the file is left untouched; reduced once released")
    func updateReconcilesOnlyUnderTheLock() throws {
        try serveEntriesOfBothKeys()
        #expect(update(try configure(mode: "static", keys: [1, 2])).status == 0)
        let before = sandbox.cacheBytes("s")
        let config = try configure(mode: "static", keys: [2])

        let held = try StoreLockTests.HeldLock(sandbox, store: "s")
        let busy = update(config)
        #expect(busy.status == 1, "\(busy.stdout)\(busy.stderr)")
        #expect(busy.stdout.hasPrefix("s busy"), "\(busy.stdout)")
        #expect(sandbox.cacheBytes("s") == before, "published without holding the store's lock")

        held.release()
        let result = update(config)
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        #expect(published() == [pin(2, key: 2)])
        #expect(server.requests("s").count == 1)  // not due: reconciled, not fetched
    }

    @Test("SIGHUP: while another process holds the store, the daemon leaves the file alone; its update reduces it after")
    func reloadReconcilesOnlyUnderTheLock() throws {
        try server.route("s", Lists.route(entries: [Lists.entry("api.example.com", 1)], key: 1))
        let config = try configure(mode: "challenge", keys: [1, 2])
        let (daemon, _) = try startDaemon(config)
        #expect(published() == [pin(1, key: 1)])
        let before = sandbox.cacheBytes("s")

        try server.route("s", Lists.route(entries: [Lists.entry("api.example.com", 2)], key: 2))
        let held = try StoreLockTests.HeldLock(sandbox, store: "s")
        try configure(mode: "challenge", keys: [2])
        daemon.signal(SIGHUP)
        usleep(2_500_000)  // well inside the daemon's 5 s wait for the lock
        #expect(sandbox.cacheBytes("s") == before, "published without holding the store's lock")
        #expect(server.requests("s").count == 1)

        held.release()
        #expect(waitForPublished([pin(2, key: 2)]) == [pin(2, key: 2)])
        #expect(Self.droppedWarnings(stop(daemon)).count == 1)
    }

    @Test("a reduced file forgets the list's ETag: the next fetch is unconditional and verified again")
    func reconcileForgetsValidators() throws {
        try serveEntriesOfBothKeys(extra: ["etag": true])
        #expect(update(try configure(mode: "static", keys: [1, 2])).status == 0)
        #expect(sandbox.savedState("s").etag != nil)

        let config = try configure(mode: "static", keys: [2])
        #expect(update(config).stdout.hasPrefix("s fresh pins=1"))  // reduced under the lock, not fetched
        #expect(sandbox.savedState("s").etag == nil && sandbox.savedState("s").bodyDigest == nil)

        // The unchanged list still holds an entry of the removed key: verified in full under the
        // remaining key, it is refused (a 304 would have passed it unchecked); the file stays as it was.
        let forced = ChildProcess.run(TestEnvironment.binary, ["update", "--config", config, "--force"], timeout: 30)
        #expect(forced.stdout.hasPrefix("s invalid-signature pins=1"), "\(forced.stdout)\(forced.stderr)")
        let requests = server.requests("s")
        #expect(requests.count == 2)
        #expect(requests.last?.headers["if-none-match"] == nil, "a conditional request could re-publish the reduced file")
        #expect(requests.last?.status == 200)
        #expect(published() == [pin(2, key: 2)])
    }
}
