import Foundation
import Logging
@testable import PinKeeperDaemon
import Synchronization
import TestSupport
import Testing

/// A change made after the configuration was read but before `ConfigWatcher`'s watches existed
/// reaches no watch; the snapshot of the read catches it. The same snapshot tells an event that
/// changed nothing (a close after writing, a touch) from a change.
@Suite("Configuration snapshots: changes made before the watches existed, events that change nothing")
struct ConfigSnapshotTests {
    let directory = TestEnvironment.temporaryDirectory("snapshot")
    var path: String { directory.appendingPathComponent("pinkeeper.toml").path }

    func write(_ name: String, _ text: String) throws {
        let url = directory.appendingPathComponent(name)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try text.write(to: url, atomically: false, encoding: .utf8)  // in place, as an editor may
    }

    @Test("files root read and the service user cannot: named, and compared as the service user reads them unless more changed")
    func unreadableToTheServiceUser() {
        let digest: [UInt8] = [1, 2, 3]
        let main = "/etc/pinkeeper/pinkeeper.toml", dropIn = "/etc/pinkeeper/stores.d/a.toml"
        let read = ConfigSnapshot(files: [.init(path: main, digest: digest), .init(path: dropIn, digest: digest)])
        #expect(read.unreadable(in: read) == ([], read))
        // The main file closed to the service user; stores.d closed too, so no drop-in is listed.
        let closed = ConfigSnapshot(files: [.init(path: main, digest: nil)])
        #expect(read.unreadable(in: closed) == ([main, dropIn], closed))
        let mainOnly = ConfigSnapshot(files: [.init(path: main, digest: nil), .init(path: dropIn, digest: digest)])
        #expect(read.unreadable(in: mainOnly) == ([main], mainOnly))
        // A drop-in also edited since the read: the watcher must still see that change.
        let edited = ConfigSnapshot(files: [.init(path: main, digest: nil), .init(path: dropIn, digest: [9])])
        #expect(read.unreadable(in: edited) == ([main], read))
        // A file root could not read either is no news.
        let neither = ConfigSnapshot(files: [.init(path: main, digest: nil)])
        #expect(neither.unreadable(in: neither) == ([], neither))
    }

    @Test("equal when nothing changed; not after an edit in place of the same size, a new or removed drop-in")
    func snapshots() throws {
        try write("pinkeeper.toml", "concurrency = 8\n")
        try write("stores.d/a.toml", "[stores.a]\n")
        let read = ConfigSnapshot.take(configPath: path)
        #expect(read.files.map(\.path) == [path, directory.path + "/stores.d/a.toml"])
        #expect(ConfigSnapshot.take(configPath: path) == read)
        try write("pinkeeper.toml", "concurrency = 9\n")
        #expect(ConfigSnapshot.take(configPath: path) != read)
        try write("pinkeeper.toml", "concurrency = 8\n")
        #expect(ConfigSnapshot.take(configPath: path) == read)
        try write("stores.d/b.toml", "[stores.b]\n")
        #expect(ConfigSnapshot.take(configPath: path) != read)
        try write("stores.d/.b.toml.swp", "")
        try FileManager.default.removeItem(atPath: directory.path + "/stores.d/b.toml")
        #expect(ConfigSnapshot.take(configPath: path) == read)  // what the loader skips does not count
        try FileManager.default.removeItem(atPath: directory.path + "/stores.d/a.toml")
        #expect(ConfigSnapshot.take(configPath: path) != read)
    }

    /// The changes a watcher reported.
    final class Changes: Sendable {
        let paths = Mutex<[String]>([])
        var all: [String] { paths.withLock { $0 } }

        func wait(seconds: Double) -> [String] {
            let deadline = Date(timeIntervalSinceNow: seconds)
            while all.isEmpty && Date() < deadline { usleep(20_000) }
            return all
        }
    }

    func watcher() -> (ConfigWatcher, Changes) {
        let changes = Changes()
        let watcher = ConfigWatcher(configPath: path, logger: Logger(label: "test")) { path in changes.paths.withLock { $0.append(path) } }
        return (watcher, changes)
    }

    @Test("edited between the read and the start of watching: one reload; untouched: none")
    func changedBeforeStart() throws {
        try write("pinkeeper.toml", "concurrency = 8\n")
        let untouched = watcher()
        untouched.0.set(enabled: true, readFrom: ConfigSnapshot.take(configPath: path))
        #expect(untouched.1.wait(seconds: 1).isEmpty)

        let read = ConfigSnapshot.take(configPath: path)
        try write("pinkeeper.toml", "concurrency = 9\n")
        let edited = watcher()
        edited.0.set(enabled: true, readFrom: read)
        #expect(edited.1.wait(seconds: 5) == ["(changed before it was watched)"])
    }

    @Test("files changed during the read: no snapshot, and the watcher reloads at once, whatever the files hold now")
    func changedDuringRead() throws {
        try write("pinkeeper.toml", "concurrency = 8\n")
        #expect(ConfigSnapshot.around(configPath: path) {}.snapshot == ConfigSnapshot.take(configPath: path))
        let during = try ConfigSnapshot.around(configPath: path) { try write("pinkeeper.toml", "concurrency = 9\n") }.snapshot
        #expect(during == nil)
        // Back to the version before the read: it may still differ from what the read saw.
        try write("pinkeeper.toml", "concurrency = 8\n")
        let (watcher, changes) = watcher()
        watcher.set(enabled: true, readFrom: during)
        #expect(changes.wait(seconds: 5) == ["(changed before it was watched)"])
    }

    @Test("while watching: a file written again with the same contents, or touched, reloads nothing; an edit does")
    func eventsThatChangeNothing() throws {
        try write("pinkeeper.toml", "concurrency = 8\n")
        let (watcher, changes) = watcher()
        watcher.set(enabled: true, readFrom: ConfigSnapshot.take(configPath: path))
        usleep(300_000)  // the watches are in place
        try write("pinkeeper.toml", "concurrency = 8\n")  // IN_CLOSE_WRITE
        #expect(utime(path, nil) == 0)  // IN_ATTRIB
        #expect(changes.wait(seconds: 1.5).isEmpty)
        try write("pinkeeper.toml", "concurrency = 9\n")
        let changed = changes.wait(seconds: 5)
        #expect(changed.count == 1 && changed.first?.hasSuffix("/pinkeeper.toml") == true, "\(changed)")
    }

    @Test("edited while watching was off, before a reload turned it on: reloaded when it is turned on")
    func changedWhileOff() throws {
        try write("pinkeeper.toml", "watch_configuration = true\n")
        let (watcher, changes) = watcher()
        watcher.set(enabled: true, readFrom: ConfigSnapshot.take(configPath: path))
        watcher.set(enabled: false, readFrom: ConfigSnapshot.take(configPath: path))
        let read = ConfigSnapshot.take(configPath: path)  // the reload that turns it on reads this
        try write("pinkeeper.toml", "watch_configuration = yes\n")
        watcher.set(enabled: true, readFrom: read)
        // Read on a thread of its own (never the daemon loop), not after the debounce.
        #expect(changes.wait(seconds: 5).first == "(changed before it was watched)")
    }
}
