import Foundation
import Glibc
import PinKeeper
import TestSupport
import Testing

/// Every entry under a directory (itself included) with its type, mode, size, mtime in
/// nanoseconds and bytes: two equal snapshots mean nothing was created, removed, written or touched.
struct DirectorySnapshot: Equatable, CustomStringConvertible {
    var entries: [String: String]

    init(_ root: URL) {
        entries = [:]
        func visit(_ path: String, _ relative: String) {
            var info = stat()
            guard lstat(path, &info) == 0 else { entries[relative] = "missing"; return }
            let mtime = Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec)
            var line = "mode=\(String(info.st_mode, radix: 8)) size=\(info.st_size) mtime=\(mtime)"
            if info.st_mode & S_IFMT == S_IFREG, let data = FileManager.default.contents(atPath: path) {
                line += " bytes=\(data.base64EncodedString())"
            }
            entries[relative] = line
            if info.st_mode & S_IFMT == S_IFDIR {
                for name in (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? [] {
                    visit("\(path)/\(name)", "\(relative)/\(name)")
                }
            }
        }
        visit(root.path, ".")
    }

    var description: String { entries.keys.sorted().map { "\($0): \(entries[$0]!.prefix(80))" }.joined(separator: "\n") }
}

/// `pinkeeper update --dry-run` through the real binary: it fetches, verifies and merges, says
/// what would change, and leaves the cache and state directories exactly as they were.
@Suite("pinkeeper update --dry-run")
struct DryRunTests {
    let server: FixtureServer
    let sandbox: Sandbox

    init() throws {
        server = try FixtureServer()
        sandbox = try Sandbox()
    }

    func pinkeeper(_ arguments: [String]) -> ChildProcess.Result {
        ChildProcess.run(TestEnvironment.binary, arguments, timeout: 30)
    }

    func lines(_ result: ChildProcess.Result) -> [String: String] {
        Dictionary(
            uniqueKeysWithValues: result.stdout.split(separator: "\n").map { line in
                (String(line.prefix { $0 != " " }), String(line))
            })
    }

    @Test("added, expired and unchanged pins and ignored unsigned fields are counted; nothing is written; a real update then does it")
    func describesChanges() throws {
        let soon = Int64(Date().timeIntervalSince1970) + 3
        try server.route(
            "s",
            Lists.route(
                mode: "static",
                entries: [
                    Lists.entry("api.example.com", 1), Lists.entry("old.example.com", 2, expires: soon),
                ]))
        let config = try sandbox.writeConfig([("s", server.url("s"), "static")])
        #expect(pinkeeper(["update", "--config", config]).status == 0)
        #expect(try sandbox.published("s").list.pins.count == 2)
        while Int64(Date().timeIntervalSince1970) < soon + 1 { usleep(100_000) }  // old.example.com expires

        try server.route(
            "s",
            Lists.route(
                mode: "static",
                entries: [
                    Lists.entry("api.example.com", 1), Lists.entry("new.example.com", 3, extra: ["depth": 2]),
                    Lists.entry("gone.example.com", 4, expires: 1_000),
                ], extra: ["domainsConfig": UnsignedFieldsTests.pinningOff]))
        let cacheBefore = DirectorySnapshot(sandbox.cache), stateBefore = DirectorySnapshot(sandbox.state)
        let dryRun = pinkeeper(["update", "--config", config, "--dry-run"])
        #expect(dryRun.status == 0, "\(dryRun.stdout)\(dryRun.stderr)")
        let line = lines(dryRun)["s"] ?? ""
        #expect(line.hasPrefix("s ok pins=2 next="), "\(line)")
        #expect(line.hasSuffix(" added=1 unchanged=1 expired=1 dropped=0 unsigned=ignored"), "\(line)")
        #expect(server.requests("s").count == 2, "the dry run did not fetch")
        #expect(DirectorySnapshot(sandbox.cache) == cacheBefore, "the dry run touched the cache directory")
        #expect(DirectorySnapshot(sandbox.state) == stateBefore, "the dry run touched the state directory")

        // What the dry run described is what an update does.
        #expect(pinkeeper(["update", "--config", config, "--force"]).status == 0)
        #expect(try sandbox.published("s").list.pins.map(\.name) == ["api.example.com", "new.example.com"])
        #expect(DirectorySnapshot(sandbox.cache) != cacheBefore)
    }

    @Test("a removed key's pins are counted as dropped but not reconciled; no stale temp removed, no corrupt copy, no lock file")
    func touchesNothing() throws {
        // One static list holding an entry signed by each key (Python signer), served verbatim.
        try server.route("k1", Lists.route(mode: "static", entries: [Lists.entry("api.example.com", 1)], key: 1))
        try server.route("k2", Lists.route(mode: "static", entries: [Lists.entry("api.example.com", 2)], key: 2))
        func entries(_ route: String) throws -> [Any] {
            let object = try JSONSerialization.jsonObject(with: try server.download(route)) as? [String: Any]
            return object?["fingerprints"] as? [Any] ?? []
        }
        let both = try JSONSerialization.data(withJSONObject: ["fingerprints": try entries("k1") + entries("k2")])
        try server.route("s", ["mode": "static", "body": String(decoding: both, as: UTF8.self)])
        try server.route("c", Lists.route(mode: "static", entries: [Lists.entry("cdn.example.com", 5)]))

        func configure(keys: [Int]) throws -> String {
            let list = keys.map { "\"\(TestEnvironment.publicKey($0))\"" }.joined(separator: ", ")
            return try sandbox.writeConfig([("s", server.url("s"), "static"), ("c", server.url("c"), "static")])
                .replacingFirstPublicKey(with: "[\(list)]", in: sandbox)
        }
        var config = try configure(keys: [1, 2])
        let first = pinkeeper(["update", "--config", config, "--store", "s"])
        #expect(first.status == 0, "\(first.stdout)\(first.stderr)")
        #expect(try sandbox.published("s").list.pins.count == 2)

        config = try configure(keys: [2])  // key 1 removed: an update would reconcile and republish
        // ...and fetch unconditionally: the server drops key 1's entry too, or the list would be refused.
        try server.route("s", ["mode": "static", "body": String(decoding: try server.download("k2"), as: UTF8.self)])
        try Data("{ not json".utf8).write(to: sandbox.cacheFile("c"))  // an update would copy it aside
        let staleTemp = sandbox.cache.appendingPathComponent(".s.json.tmp-4000000-dead")
        try Data("half".utf8).write(to: staleTemp)  // an update would remove it
        let cacheBefore = DirectorySnapshot(sandbox.cache), stateBefore = DirectorySnapshot(sandbox.state)

        let dryRun = pinkeeper(["update", "--config", config, "--dry-run"])
        #expect(dryRun.status == 0, "\(dryRun.stdout)\(dryRun.stderr)")
        let byStore = lines(dryRun)
        #expect(byStore["s"]?.hasPrefix("s ok pins=1 ") == true, "\(dryRun.stdout)")
        #expect(byStore["s"]?.hasSuffix(" added=0 unchanged=1 expired=0 dropped=1") == true, "\(dryRun.stdout)")
        #expect(byStore["c"]?.hasPrefix("c ok pins=1 ") == true && byStore["c"]?.contains(" added=1 ") == true, "\(dryRun.stdout)")
        #expect(DirectorySnapshot(sandbox.cache) == cacheBefore, "the dry run touched the cache directory")
        #expect(DirectorySnapshot(sandbox.state) == stateBefore, "the dry run touched the state directory")

        // The same situation without --dry-run changes all of it: the comparison above can fail.
        #expect(pinkeeper(["update", "--config", config, "--store", "s", "--force"]).status == 0)
        #expect(try sandbox.published("s").list.pins.map(\.key) == [KeyRemovalTests.keyID(2)])
        #expect(!FileManager.default.fileExists(atPath: staleTemp.path))
    }

    @Test("a failing store: exit 1, its line names the failure, nothing is recorded, no directory is created")
    func failingStore() throws {
        try server.route("a", Lists.route(entries: [Lists.entry("api.example.com", 1)]))
        try server.route("b", Lists.route(entries: [], extra: ["status": 503]))
        let missingCache = sandbox.root.appendingPathComponent("new-cache").path
        let missingState = sandbox.root.appendingPathComponent("new-state").path
        let config = try sandbox.writeConfig(
            [("a", server.url("a"), "challenge"), ("b", server.url("b"), "challenge")],
            cacheDirectory: missingCache, stateDirectory: missingState)
        let rootBefore = DirectorySnapshot(sandbox.root)
        let dryRun = pinkeeper(["update", "--config", config, "--dry-run"])
        #expect(dryRun.status == 1, "\(dryRun.stdout)\(dryRun.stderr)")
        let byStore = lines(dryRun)
        #expect(byStore["a"]?.hasPrefix("a ok pins=1 ") == true && byStore["a"]?.contains(" added=1 ") == true, "\(dryRun.stdout)")
        #expect(byStore["b"]?.hasPrefix("b http-error pins=0 ") == true, "\(dryRun.stdout)")
        #expect(byStore["b"]?.contains("reason=\"the server answered HTTP 503\"") == true, "\(dryRun.stdout)")
        #expect(DirectorySnapshot(sandbox.root) == rootBefore, "the dry run wrote something")

        let onlyA = pinkeeper(["update", "--config", config, "--dry-run", "--store", "a"])
        #expect(onlyA.status == 0 && lines(onlyA).keys.sorted() == ["a"], "\(onlyA.stdout)")
    }
}

extension String {
    /// Rewrites the config at this path so that store `s` trusts `keys` (a TOML value).
    func replacingFirstPublicKey(with keys: String, in sandbox: Sandbox) throws -> String {
        let text = try String(contentsOfFile: self, encoding: .utf8)
        guard let range = text.range(of: "public_key = \"\(TestEnvironment.publicKey())\"") else { return self }
        try text.replacingCharacters(in: range, with: "public_key = \(keys)").write(toFile: self, atomically: true, encoding: .utf8)
        return self
    }
}
