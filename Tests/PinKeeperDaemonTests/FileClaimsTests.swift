import Foundation
import TestSupport
import Testing
@testable import PinKeeperDaemon

/// No two of the daemon's writers may share a path: the directories, the metrics file and
/// every file named after a store id (`FileClaims`).
@Suite("Configuration: no two files coincide")
struct FileClaimsTests {
    func load(_ main: String) throws -> ConfigFixture.Loaded { try ConfigTests.load(main) }

    func directories(cache: String, state: String, metrics: String? = nil) -> String {
        "cache_directory = \"\(cache)\"\nstate_directory = \"\(state)\"\n" + (metrics.map { "metrics_file = \"\($0)\"\n" } ?? "")
    }

    // MARK: cache_directory and state_directory

    @Test(
        "cache_directory equal to state_directory, as written or once normalised",
        arguments: [
            ("/srv/pk", "/srv/pk"), ("/srv/pk/", "/srv//pk/."), ("/srv/x/../pk", "/srv/pk"), ("/srv/pk", "/srv/pk/cache/.."),
        ])
    func sameDirectory(_ cache: String, _ state: String) throws {
        let loaded = try load(directories(cache: cache, state: state) + ConfigTests.store())
        try ConfigTests.expectError(loaded, store: nil, key: "state_directory", "is also cache_directory (\(cache))")
    }

    @Test("the same directory through a symlink, whether the directories exist yet or not")
    func sameDirectoryThroughSymlink() throws {
        let root = TestEnvironment.temporaryDirectory("claims")
        defer { try? FileManager.default.removeItem(at: root) }
        try FileManager.default.createDirectory(at: root.appendingPathComponent("real"), withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: root.appendingPathComponent("link").path, withDestinationPath: "real")
        let real = root.appendingPathComponent("real/pk").path, viaLink = root.appendingPathComponent("link/pk").path
        try ConfigTests.expectError(
            try load(directories(cache: real, state: viaLink)), store: nil, key: "state_directory",
            "is also cache_directory (\(real))")
        try FileManager.default.createDirectory(atPath: real, withIntermediateDirectories: true)
        try ConfigTests.expectError(
            try load(directories(cache: viaLink, state: real)), store: nil, key: "state_directory",
            "is also cache_directory (\(viaLink))")
    }

    @Test("'..' after a symlink goes up from the link's target, as the kernel resolves it")
    func dotDotAfterSymlink() throws {
        let root = TestEnvironment.temporaryDirectory("claims-dotdot")
        defer { try? FileManager.default.removeItem(at: root) }
        try FileManager.default.createDirectory(at: root.appendingPathComponent("deep/inner"), withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: root.appendingPathComponent("link").path, withDestinationPath: "deep/inner")
        // link/.. is deep, not root: the two name one directory only as the kernel resolves them.
        let viaLink = root.appendingPathComponent("link/../pk").path, direct = root.appendingPathComponent("deep/pk").path
        #expect(FileClaims.resolved(viaLink) == FileClaims.resolved(direct))
        try ConfigTests.expectError(
            try load(directories(cache: direct, state: viaLink) + ConfigTests.store()), store: nil,
            key: "state_directory", "is also cache_directory (\(direct))")
        #expect(FileClaims.resolved(root.appendingPathComponent("link/../../pk").path) == FileClaims.resolved(root.path) + "/pk")
    }

    @Test("different and nested directories are fine: no derived name contains a slash")
    func differentOrNested() throws {
        for (cache, state) in [("/srv/cache", "/srv/state"), ("/srv/pk", "/srv/pk/state"), ("/srv/pk/cache", "/srv/pk")] {
            let loaded = try load(directories(cache: cache, state: state) + ConfigTests.store("x") + ConfigTests.store("state"))
            #expect(loaded.error == nil, "\(cache) and \(state): \(loaded.error.map { "\($0)" } ?? "")")
        }
    }

    @Test("a directory that is a store's file")
    func directoryIsAStoresFile() throws {
        let loaded = try load(directories(cache: "/srv/cache", state: "/srv/cache/banking.json") + ConfigTests.store())
        try ConfigTests.expectError(loaded, store: "banking", key: nil, "/srv/cache/banking.json is also state_directory")
    }

    // MARK: Store ids

    @Test(
        "an id with a reserved part is refused, naming the store whose files it would shadow",
        arguments: [
            ("x.probes", "'probes'", "store 'x'"), ("x.state", "'state'", "store 'x'"), ("x.lock", "'lock'", "store 'x'"),
            ("a.json.tmp-1", "'json'", "store 'a'"), ("a.b.json", "'json'", "store 'a.b'"), ("x.y.state.z", "'state'", "store 'x.y'"),
        ])
    func reservedIDPart(_ id: String, _ part: String, _ fragment: String) throws {
        let loaded = try load(ConfigTests.store("x") + ConfigTests.store("\"\(id)\""))
        try ConfigTests.expectError(loaded, store: id, key: nil, "must not have \(part) as a part after a dot")
        #expect(loaded.error?.description.contains(fragment) == true, "\(loaded.error.map { "\($0)" } ?? "")")
    }

    @Test(
        "ids that only resemble the suffixes are fine",
        arguments: ["api.statement", "x.probe", "jsonx", "x-json", "lock-1", "x_state", "json", "state", "lock.x"])
    func resemblingIDs(_ id: String) throws {
        #expect(try load(ConfigTests.store("\"\(id)\"")).config().stores.map(\.id) == [id])
    }

    /// With the id rule, no file of one store is a file of another even in one directory.
    @Test("the names derived from allowed ids never coincide")
    func derivedNamesAreDistinct() throws {
        let ids = ["x", "x.y", "x.probe", "api.statement", "a-b", "a_b.c", "state", "probes", "json", "lock", "json.x"]
        #expect(ids.allSatisfy { FileClaims.idProblem($0) == nil })
        let names = ids.flatMap { id in
            [
                CacheDirectory.fileName(store: id), StateDirectory.fileName(store: id), ProbeStateDirectory.fileName(store: id),
                StoreLock.fileName(store: id),
            ]
        }
        #expect(Set(names).count == names.count)
    }

    // MARK: metrics_file

    @Test(
        "metrics_file on a store's file or on a directory",
        arguments: [
            ("/srv/cache/banking.json", "the cache file of store 'banking'"),
            ("/srv/state/banking.state.json", "the state file of store 'banking'"),
            ("/srv/state/banking.probes.json", "the probe results of store 'banking'"),
            ("/srv/state/banking.lock", "the lock of store 'banking'"),
            ("/srv/state/../cache/./banking.json", "the cache file of store 'banking'"),
            ("/srv/cache", "cache_directory (/srv/cache)"),
            ("/srv/state/", "state_directory (/srv/state)"),
        ])
    func metricsOnAnotherFile(_ metrics: String, _ other: String) throws {
        let loaded = try load(directories(cache: "/srv/cache", state: "/srv/state", metrics: metrics) + ConfigTests.store())
        try ConfigTests.expectError(loaded, store: nil, key: "metrics_file", "is also \(other)")
    }

    @Test("metrics_file beside the stores' files is fine")
    func metricsBeside() throws {
        let loaded = try load(
            directories(cache: "/srv/cache", state: "/srv/state", metrics: "/srv/cache/pinkeeper.prom")
                + ConfigTests.store())
        #expect(loaded.error == nil)
    }

    // MARK: Through the binary

    @Test("check-config and update refuse cache_directory = state_directory: exit 78, one line naming both keys")
    func binary() throws {
        let sandbox = try Sandbox()
        let config = try sandbox.writeConfig(
            [("a", "https://127.0.0.1:1/a", "challenge")],
            cacheDirectory: sandbox.cache.path, stateDirectory: sandbox.cache.path + "/")
        for command in ["check-config", "update"] {
            let result = ChildProcess.run(TestEnvironment.binary, [command, "--config", config], timeout: 30)
            #expect(result.status == 78, "\(command): \(result.status) \(result.stderr)")
            #expect(
                result.stderr.hasPrefix(
                    "pinkeeper: \(config): key 'state_directory': \(FileClaims.resolved(sandbox.cache.path)) is also cache_directory"),
                "\(result.stderr)")
            #expect(result.stderr.split(separator: "\n").count == 1)
        }
    }
}
