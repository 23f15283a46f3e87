import Foundation
import Glibc
import PinKeeper
@testable import PinKeeperDaemon
import TestSupport

/// A cache and state directory for one test, plus helpers to build stores and lists.
final class Sandbox: @unchecked Sendable {  // paths are immutable; files are the shared state, as in production
    let root: URL
    let cache: URL
    let state: URL
    let log = LogRecorder()

    init() throws {
        root = TestEnvironment.temporaryDirectory("sandbox")
        cache = root.appendingPathComponent("cache")
        state = root.appendingPathComponent("state")
        // Whatever the umask: a hook written here runs as root only from a directory only root can write.
        for dir in [root, cache, state] {
            try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
            chmod(dir.path, 0o755)
        }
    }

    deinit { try? FileManager.default.removeItem(at: root) }

    func updater(fileSystem: any FileSystem = PosixFileSystem(), clock: any WallClock = SystemClock()) -> StoreUpdater {
        let writer = AtomicWriter(fileSystem: fileSystem)
        return StoreUpdater(
            fetcher: CurlFetcher(userAgent: PinKeeperVersion.userAgent),
            cache: CacheDirectory(path: cache.path, writer: writer),
            state: StateDirectory(path: state.path), clock: clock, logger: log.logger)
    }

    func store(
        _ id: String, url: String, mode: ListMode = .challenge, keys: [Int] = [1],
        policy: (inout UpdatePolicy) -> Void = { _ in }
    ) throws -> StoreConfig {
        var updatePolicy = UpdatePolicy()
        updatePolicy.requestTimeout = 5
        policy(&updatePolicy)
        return StoreConfig(
            id: id, url: url, publicKeys: try keys.map { try PublicKey(base64: TestEnvironment.publicKey($0)) },
            mode: mode, caFile: TestEnvironment.certificate("ca.pem"), policy: updatePolicy)
    }

    func cacheFile(_ store: String) -> URL { cache.appendingPathComponent("\(store).json") }

    func cacheBytes(_ store: String) -> Data? { try? Data(contentsOf: cacheFile(store)) }

    func published(_ store: String) throws -> CacheFile {
        try CacheFile(json: try Data(contentsOf: cacheFile(store)))
    }

    func savedState(_ store: String) -> StoreState { StateDirectory(path: state.path).load(store: store) }
}

/// List entries for route files.
enum Lists {
    static let future: Int64 = 4_102_444_800  // 2100-01-01

    static func fingerprint(_ byte: UInt8) -> String { Data(repeating: byte, count: 32).base64EncodedString() }

    static func entry(_ name: String, _ byte: UInt8, expires: Int64 = future, extra: [String: Any] = [:]) -> [String: Any] {
        ["name": name, "fingerprint": fingerprint(byte), "expires": expires].merging(extra) { $1 }
    }

    static func route(
        mode: String = "challenge", entries: [[String: Any]], key: Int = 1,
        extra: [String: Any] = [:]
    ) -> [String: Any] {
        ["mode": mode, "signing_key": TestEnvironment.signingKey(key), "fingerprints": entries].merging(extra) { $1 }
    }
}

extension Sandbox {
    /// What `writeConfig` sets as `user` by default: tests run as root keep working as root in
    /// the sandbox's root-owned directories (ServiceUserTests switch to a service user).
    static let defaultUser: String? = geteuid() == 0 ? "root" : nil
    /// The `user` line of `defaultUser`, for tests that write their own main file.
    static let userLine = defaultUser.map { "user = \"\($0)\"\n" } ?? ""

    /// Writes `pinkeeper.toml` for stores on the fixture server; returns its path. `extra` holds
    /// top-level keys; `storeExtra` lines go into every store's table.
    @discardableResult
    func writeConfig(
        _ stores: [(id: String, url: String, mode: String)], extra: String = "", storeExtra: String = "",
        cacheDirectory: String? = nil, stateDirectory: String? = nil, user: String? = Sandbox.defaultUser
    ) throws -> String {
        var text = "cache_directory = \"\(cacheDirectory ?? cache.path)\"\nstate_directory = \"\(stateDirectory ?? state.path)\"\n"
        if let user { text += "user = \"\(user)\"\n" }
        text += "\(extra)\n"
        for store in stores { text += storeTable(store, extra: storeExtra) }
        let path = root.appendingPathComponent("pinkeeper.toml").path
        try text.write(toFile: path + ".tmp", atomically: false, encoding: .utf8)
        _ = Glibc.rename(path + ".tmp", path)
        return path
    }

    /// One `[stores.ID]` table on the fixture server, as `writeConfig` writes it.
    func storeTable(_ store: (id: String, url: String, mode: String), extra: String = "") -> String {
        """
        [stores.\(store.id)]
        url = "\(store.url)"
        public_key = "\(TestEnvironment.publicKey())"
        mode = "\(store.mode)"
        ca_file = "\(TestEnvironment.certificate("ca.pem"))"
        request_timeout = "10s"
        \(extra)

        """
    }
}
