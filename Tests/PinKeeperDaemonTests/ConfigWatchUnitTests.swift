import Foundation
import Glibc
@testable import PinKeeperDaemon
import Testing

/// The parts of `ConfigWatcher` that decide: which directories, which events, and when.
@Suite("Configuration watching: targets, events, debouncing")
struct ConfigWatchUnitTests {
    /// kubelet's layout under /etc/pinkeeper: the symlinks resolve into the current version.
    static func kubelet(_ path: String) -> String? {
        [
            "/etc/pinkeeper": "/etc/pinkeeper", "/etc/pinkeeper/pinkeeper.toml": "/etc/pinkeeper/..2026_11_22/pinkeeper.toml",
            "/etc/pinkeeper/stores.d": "/etc/pinkeeper/..2026_11_22/stores.d",
        ][path]
    }

    @Test("kubelet's volume: the volume directory, the version the main file resolves to, and its stores.d")
    func kubeletTargets() {
        #expect(
            WatchTarget.targets(configPath: "/etc/pinkeeper/pinkeeper.toml", resolve: Self.kubelet) == [
                WatchTarget(directory: "/etc/pinkeeper", entries: .named(["pinkeeper.toml", "stores.d", "..data"])),
                WatchTarget(directory: "/etc/pinkeeper/..2026_11_22", entries: .named(["pinkeeper.toml"])),
                WatchTarget(directory: "/etc/pinkeeper/..2026_11_22/stores.d", entries: .dropIns),
            ])
    }

    @Test("a host's plain files: one directory and stores.d; without stores.d, the directory alone; a relative path")
    func hostTargets() {
        let plain: [String: String] = [
            "/etc/pk": "/etc/pk", "/etc/pk/main.toml": "/etc/pk/main.toml", "/etc/pk/stores.d": "/etc/pk/stores.d",
        ]
        #expect(
            WatchTarget.targets(configPath: "/etc/pk/main.toml", resolve: { plain[$0] }) == [
                WatchTarget(directory: "/etc/pk", entries: .named(["main.toml", "stores.d", "..data"])),
                WatchTarget(directory: "/etc/pk/stores.d", entries: .dropIns),
            ])
        #expect(
            WatchTarget.targets(configPath: "/etc/pk/main.toml", resolve: { $0 == "/etc/pk/stores.d" ? nil : plain[$0] }) == [
                WatchTarget(directory: "/etc/pk", entries: .named(["main.toml", "stores.d", "..data"]))
            ])
        #expect(
            WatchTarget.targets(configPath: "pk.toml", resolve: { _ in nil }) == [
                WatchTarget(directory: ".", entries: .named(["pk.toml", "stores.d", "..data"]))
            ])
        #expect(WatchTarget.split("/pk.toml") == ("/", "pk.toml"))
    }

    static let watches: [Int32: WatchTarget] = [
        1: WatchTarget(directory: "/etc/pinkeeper", entries: .named(["pinkeeper.toml", "stores.d", "..data"])),
        2: WatchTarget(directory: "/etc/pinkeeper/..v1/stores.d", entries: .dropIns),
    ]

    static func event(_ watch: Int32, _ mask: Int32, _ name: String = "") -> Inotify.Event {
        Inotify.Event(watch: watch, mask: UInt32(bitPattern: mask), name: name)
    }

    @Test(
        "which events change the configuration",
        arguments: [
            (event(1, IN_MOVED_TO, "..data"), "/etc/pinkeeper/..data"),
            (event(1, IN_CREATE, "..data_tmp"), nil),
            (event(1, IN_CREATE, "..2026_11_22"), nil),
            (event(1, IN_MOVED_TO, "pinkeeper.toml"), "/etc/pinkeeper/pinkeeper.toml"),
            (event(1, IN_CLOSE_WRITE, "pinkeeper.toml.swp"), nil),
            (event(1, IN_CREATE | IN_ISDIR, "stores.d"), "/etc/pinkeeper/stores.d"),
            (event(2, IN_CLOSE_WRITE, "banking.toml"), "/etc/pinkeeper/..v1/stores.d/banking.toml"),
            (event(2, IN_DELETE, "banking.toml"), "/etc/pinkeeper/..v1/stores.d/banking.toml"),
            (event(2, IN_CLOSE_WRITE, ".banking.toml.swp"), nil),
            (event(2, IN_CLOSE_WRITE, "notes.txt"), nil),
            (event(2, IN_DELETE_SELF), "/etc/pinkeeper/..v1/stores.d"),
            (event(2, IN_IGNORED), "/etc/pinkeeper/..v1/stores.d"),
            (event(7, IN_IGNORED), nil),  // a watch rewatch removed
            (event(7, IN_CLOSE_WRITE, "banking.toml"), nil),
            (event(-1, IN_Q_OVERFLOW), "(changes lost: inotify queue overflow)"),
        ] as [(Inotify.Event, String?)])
    func changes(event: Inotify.Event, path: String?) {
        #expect(WatchTarget.changedPath(event, Self.watches) == path)
    }

    @Test("inotify records: names NUL-padded, none for the directory itself, a record cut short ends the parse")
    func parse() {
        func record(_ watch: Int32, _ mask: UInt32, _ name: String, padTo length: Int) -> [UInt8] {
            var bytes: [UInt8] = []
            for value in [UInt32(bitPattern: watch), mask, 0, UInt32(length)] { withUnsafeBytes(of: value) { bytes += $0 } }
            return bytes + Array(name.utf8) + [UInt8](repeating: 0, count: length - name.utf8.count)
        }
        let bytes =
            record(3, UInt32(IN_MOVED_TO), "..data", padTo: 16) + record(4, UInt32(IN_DELETE_SELF), "", padTo: 0)
            + record(5, UInt32(IN_CREATE), "x.toml", padTo: 32).dropLast(8)
        #expect(
            Inotify.parse(bytes[...]) == [
                Inotify.Event(watch: 3, mask: UInt32(IN_MOVED_TO), name: "..data"),
                Inotify.Event(watch: 4, mask: UInt32(IN_DELETE_SELF), name: ""),
            ])
    }

    @Test("the kernel's events for a rename into a watched directory, and nothing while idle")
    func kernel() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("pinkeeper-inotify-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let inotify = try Inotify()
        let watch = try inotify.watch(directory.path, mask: ConfigWatcher.mask).get()
        #expect(inotify.wait(milliseconds: 50).isEmpty)
        try "x".write(to: directory.appendingPathComponent("new"), atomically: false, encoding: .utf8)
        #expect(rename(directory.appendingPathComponent("new").path, directory.appendingPathComponent("pinkeeper.toml").path) == 0)
        let events = inotify.wait(milliseconds: 1000)
        #expect(events.contains { $0.watch == watch && $0.has(IN_MOVED_TO) && $0.name == "pinkeeper.toml" }, "\(events)")
        #expect(throws: Inotify.WatchError.self) {
            try inotify.watch(directory.appendingPathComponent("missing").path, mask: ConfigWatcher.mask).get()
        }
    }

    @Test("debounce: 500 ms after the last change, at most 5 s after the first; poll timeouts rounded up")
    func debounce() {
        var debounce = Debounce(quiet: .milliseconds(500), longest: .seconds(5))
        let start = ContinuousClock.now
        #expect(debounce.deadline == nil && debounce.pollTimeout(start) == -1 && !debounce.isDue(start))
        debounce.note(start)
        #expect(debounce.deadline == start + .milliseconds(500))
        debounce.note(start + .milliseconds(300))
        #expect(debounce.deadline == start + .milliseconds(800))
        #expect(debounce.pollTimeout(start + .milliseconds(300)) == 500)
        #expect(debounce.pollTimeout(start + .milliseconds(800) - .nanoseconds(1)) == 1)
        #expect(!debounce.isDue(start + .milliseconds(799)) && debounce.isDue(start + .milliseconds(800)))
        for step in 1...60 { debounce.note(start + .milliseconds(100 * step)) }
        #expect(debounce.deadline == start + .seconds(5))
        #expect(debounce.pollTimeout(start + .seconds(6)) == 0)
        debounce.reset()
        #expect(debounce.deadline == nil)
    }
}
