public import FoundationEssentials
import Glibc
import PinKeeper

/// Reads the main TOML file and every `stores.d/*.toml` beside it (lexical order) into a
/// validated `Configuration`. Anything unknown or malformed is a `ConfigError`.
public enum ConfigLoader {
    public static let defaultPath = "/etc/pinkeeper/pinkeeper.toml"
    /// The daemon-wide keys, which only the main file may set, above its first table.
    static let topLevelKeys = [
        "cache_directory", "state_directory", "metrics_file", "concurrency", "log_format", "watch_configuration", "user",
        "envoy_sds_directory", "private_volumes",
    ]
    /// The keys of `[defaults]`, which every store may set too.
    static let defaultsKeys = PolicyKeys.all + ProbeKeys.all

    /// `watchByDefault`: what an absent `watch_configuration` means (`run --watch-configuration`,
    /// as the container image runs it); the key, when written, always decides.
    public static func load(
        path: String, environment: [String: String] = ProcessInfo.processInfo.environment, watchByDefault: Bool = false
    ) throws(ConfigError) -> Configuration {
        let main = try parse(file: path)
        try checkKeys(main, allowed: topLevelKeys + ["defaults", "stores"], file: path)
        var defaults = UpdatePolicy()
        var probeDefaults = ProbeKeys.Written()
        if let table = try subtable(main, "defaults", file: path) {
            try checkKeys(table, allowed: defaultsKeys, file: path, prefix: "defaults.")
            defaults = try PolicyKeys.apply(table, to: defaults, file: path, store: nil)
            probeDefaults = try ProbeKeys.read(table, file: path, store: nil)
        }
        var stores: [String: StoreConfig] = [:]
        try addStores(from: main, file: path, defaults: defaults, probeDefaults: probeDefaults, into: &stores)

        var sources = [path]
        let dropIns = URL(fileURLWithPath: path).deletingLastPathComponent().appendingPathComponent("stores.d").path
        for file in try dropInFiles(in: dropIns) {
            let table = try parse(file: file)
            try checkKeys(table, allowed: ["stores"], file: file)
            try addStores(from: table, file: file, defaults: defaults, probeDefaults: probeDefaults, into: &stores)
            sources.append(file)
        }

        let configuration = Configuration(
            cacheDirectory: try directory(
                main, "cache_directory", env: environment["CACHE_DIRECTORY"],
                fallback: "/var/cache/pinkeeper", file: path),
            stateDirectory: try directory(
                main, "state_directory", env: environment["STATE_DIRECTORY"],
                fallback: "/var/lib/pinkeeper", file: path),
            metricsFile: try absolutePath(main, "metrics_file", file: path),
            concurrency: try concurrency(main, file: path),
            logFormat: try logFormat(main, file: path),
            watchConfiguration: try flag(main, "watch_configuration", file: path) ?? watchByDefault,
            envoySDSDirectory: try absolutePath(main, "envoy_sds_directory", file: path),
            user: try UserKey.read(main, file: path),
            privateVolumes: try PrivateVolumesKey.read(main, file: path),
            stores: stores.values.sorted { $0.id < $1.id },
            sources: sources)
        try FileClaims.check(configuration, mainFile: path)
        try PrivateVolumesKey.check(configuration, file: path)
        return configuration
    }

    // MARK: Files

    static func parse(file: String) throws(ConfigError) -> TOMLTable {
        let text: String
        do {
            text = try String(contentsOfFile: file, encoding: .utf8)
        } catch {
            let reason =
                FileManager.default.fileExists(atPath: file)
                ? "cannot be read (check its permissions and that it is UTF-8)"
                : "does not exist (create it or pass --config)"
            throw ConfigError(file: file, reason)
        }
        do {
            return try TOMLParser.parse(text)
        } catch {
            throw ConfigError(file: file, "line \(error.line), column \(error.column): \(error.reason)")
        }
    }

    static func dropInFiles(in directory: String) throws(ConfigError) -> [String] {
        var info = stat()
        guard stat(directory, &info) == 0, info.st_mode & S_IFMT == S_IFDIR else { return [] }
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else {
            throw ConfigError(file: directory, "cannot be listed (check its permissions)")
        }
        return names.filter { $0.hasSuffix(".toml") && !$0.hasPrefix(".") }.sorted().map { directory + "/" + $0 }
    }

    // MARK: Stores

    private static func addStores(
        from table: TOMLTable, file: String, defaults: UpdatePolicy,
        probeDefaults: ProbeKeys.Written,
        into stores: inout [String: StoreConfig]
    ) throws(ConfigError) {
        guard let all = try subtable(table, "stores", file: file) else { return }
        for id in all.keys.sorted() {
            guard let body = all[id]?.table else {
                throw ConfigError(file: file, store: id, "must be a table: write [stores.\(id)]")
            }
            if let existing = stores[id] {
                throw ConfigError(file: file, store: id, "is already defined in \(existing.definedIn); store ids must be unique")
            }
            stores[id] = try StoreParser(id: id, table: body, file: file, defaults: defaults, probeDefaults: probeDefaults).parse()
        }
    }

    // MARK: Keys

    static func checkKeys(
        _ table: TOMLTable, allowed: [String], file: String, store: String? = nil,
        prefix: String = ""
    ) throws(ConfigError) {
        for key in table.keys where !allowed.contains(key) {
            if topLevelKeys.contains(key) {
                // In TOML a key below a [table] header belongs to that table: the usual slip.
                throw ConfigError(
                    file: file, store: store, key: prefix + key,
                    "unknown key here; '\(key)' is daemon-wide: set it in the main file, above its first [table]")
            }
            let hint = allowed.first { $0.lowercased() == key.lowercased() || editDistance($0, key) <= 2 }
            throw ConfigError(
                file: file, store: store, key: prefix + key,
                "unknown key" + (hint.map { "; did you mean '\($0)'?" } ?? "; allowed keys: \(allowed.joined(separator: ", "))"))
        }
    }

    static func subtable(_ table: TOMLTable, _ key: String, file: String) throws(ConfigError) -> TOMLTable? {
        guard let value = table[key] else { return nil }
        guard let sub = value.table else { throw ConfigError(file: file, key: key, "must be a table: write [\(key)]") }
        return sub
    }

    static func optionalString(_ table: TOMLTable, _ key: String, file: String, store: String? = nil) throws(ConfigError) -> String? {
        guard let value = table[key] else { return nil }
        guard let text = value.string else { throw ConfigError(file: file, store: store, key: key, "must be a string") }
        return text
    }

    /// An absolute path to a file this process can read now (a CA or fallback file).
    static func readablePath(_ table: TOMLTable, _ key: String, file: String, store: String?) throws(ConfigError) -> String? {
        guard let path = try optionalString(table, key, file: file, store: store) else { return nil }
        guard path.hasPrefix("/") else { throw ConfigError(file: file, store: store, key: key, "must be an absolute path") }
        guard FileManager.default.isReadableFile(atPath: path) else {
            throw ConfigError(file: file, store: store, key: key, "\(path) does not exist or cannot be read")
        }
        return path
    }

    private static func absolutePath(_ table: TOMLTable, _ key: String, file: String) throws(ConfigError) -> String? {
        guard let path = try optionalString(table, key, file: file) else { return nil }
        guard path.hasPrefix("/") else { throw ConfigError(file: file, key: key, "must be an absolute path") }
        return path
    }

    private static func concurrency(_ table: TOMLTable, file: String) throws(ConfigError) -> Int {
        try NumericKeys.concurrency.read(table, file: file, store: nil).map { Int($0) } ?? Configuration.defaultConcurrency
    }

    private static func logFormat(_ table: TOMLTable, file: String) throws(ConfigError) -> LogFormat {
        guard let value = table["log_format"] else { return .logfmt }
        guard let format = value.string.flatMap(LogFormat.init(rawValue:)) else {
            let names = LogFormat.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: " or ")
            throw ConfigError(
                file: file, key: "log_format", "must be \(names) (how lines on stderr are written when it is not the journal)")
        }
        return format
    }

    private static func flag(_ table: TOMLTable, _ key: String, file: String) throws(ConfigError) -> Bool? {
        guard let value = table[key] else { return nil }
        guard let flag = value.bool else { throw ConfigError(file: file, key: key, "must be true or false") }
        return flag
    }

    private static func directory(
        _ table: TOMLTable, _ key: String, env: String?, fallback: String,
        file: String
    ) throws(ConfigError) -> String {
        if let path = try absolutePath(table, key, file: file) { return path }
        // systemd passes a colon-separated list when several directories are configured; the first is ours.
        if let env, let first = env.split(separator: ":").first, first.hasPrefix("/") { return String(first) }
        return fallback
    }

    private static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        var row = Array(0...b.count)
        for i in 1...max(a.count, 1) where !a.isEmpty {
            var previous = row[0]
            row[0] = i
            for j in stride(from: 1, through: b.count, by: 1) {
                let current = row[j]
                row[j] = min(row[j] + 1, row[j - 1] + 1, previous + (a[i - 1] == b[j - 1] ? 0 : 1))
                previous = current
            }
        }
        return row[b.count]
    }
}
