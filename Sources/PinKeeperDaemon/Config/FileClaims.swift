import Glibc

/// Every path a configuration makes the daemon write, so that no two writers ever share one.
/// Two rules keep the names apart, and `check` refuses whatever still meets:
/// - a store id has no part `json`, `lock`, `probes` or `state` after a dot, the suffixes of the
///   names derived from it: then `<id>.json` (and its `.corrupt-<time>` copies and
///   `.<id>.json.tmp-…` temps), `<id>.state.json`, `<id>.probes.json` and `<id>.lock` belong to
///   one store and one purpose each, and a temp-file prefix of one store never matches another's;
/// - `cache_directory`, `state_directory`, `metrics_file` and each store's files are different
///   paths, compared after resolving `.`, `..`, repeated slashes and the symlinks of the parts
///   that exist (the directories are created at start, so they may not exist yet).
enum FileClaims {
    static let reservedIDParts = ["json", "lock", "probes", "state"]

    /// Why `id` cannot name a store's files, or nil when it can.
    static func idProblem(_ id: String) -> String? {
        let parts = id.split(separator: ".", omittingEmptySubsequences: false)
        // The first part is never a suffix: "state" names state.json, state.state.json, … of its own.
        guard let index = parts.indices.dropFirst().first(where: { reservedIDParts.contains(String(parts[$0])) }) else {
            return nil
        }
        return "a store id must not have '\(parts[index])' as a part after a dot: the daemon names a store's files "
            + "<id>.json, <id>.state.json, <id>.probes.json and <id>.lock, so store "
            + "'\(parts[..<index].joined(separator: "."))' and this one would share names"
    }

    private struct Claim {
        var path: String
        /// How the message names the claimant: "cache_directory (/var/cache/pinkeeper)", "the state file of store 'x'".
        var name: String
        var error: (String) -> ConfigError
    }

    static func check(_ configuration: Configuration, mainFile: String) throws(ConfigError) {
        let cache = resolved(configuration.cacheDirectory), state = resolved(configuration.stateDirectory)
        var claims = [
            Claim(path: cache, name: "cache_directory (\(configuration.cacheDirectory))") {
                ConfigError(file: mainFile, key: "cache_directory", $0)
            },
            Claim(path: state, name: "state_directory (\(configuration.stateDirectory))") {
                ConfigError(file: mainFile, key: "state_directory", $0)
            },
        ]
        for store in configuration.stores {
            let files = [
                (cache, StoreFiles.cache(store.id), "the cache file"),
                (state, StoreFiles.state(store.id), "the state file"),
                (state, StoreFiles.probes(store.id), "the probe results"),
                (state, StoreFiles.lock(store.id), "the lock"),
            ]
            for (directory, name, purpose) in files {
                claims.append(
                    Claim(path: join(directory, name), name: "\(purpose) of store '\(store.id)'") {
                        ConfigError(file: store.definedIn, store: store.id, key: nil, $0)
                    })
            }
        }
        if let metrics = configuration.metricsFile {
            let parts = metrics.unicodeScalars.split(separator: "/").map { String(String.UnicodeScalarView($0)) }
            let parent = parts.dropLast().joined(separator: "/")
            let name = parts.last ?? ""
            claims.append(
                Claim(path: join(resolved("/" + parent), name), name: "metrics_file") {
                    ConfigError(file: mainFile, key: "metrics_file", $0)
                })
        }
        try checkEnvoyDirectory(configuration, cache: cache, state: state, mainFile: mainFile)
        var seen: [[UInt8]: Claim] = [:]  // by bytes, as the kernel compares names: not String's canonical equivalence
        for claim in claims {
            if let earlier = seen[Array(claim.path.utf8)] {
                throw claim.error("\(claim.path) is also \(earlier.name): two writers would share one path; give each its own")
            }
            seen[Array(claim.path.utf8)] = claim
        }
    }

    /// The SDS directory holds a directory per store: neither inside nor around the cache and
    /// state directories, whose files it would otherwise share names with.
    private static func checkEnvoyDirectory(_ configuration: Configuration, cache: String, state: String, mainFile: String)
        throws(ConfigError)
    {
        guard let envoy = configuration.envoySDSDirectory.map(resolved) else { return }
        for (other, key) in [(cache, "cache_directory"), (state, "state_directory")] {
            let inside = { (a: String, b: String) in a == b || a.hasPrefix(b.hasSuffix("/") ? b : b + "/") }
            if inside(envoy, other) || inside(other, envoy) {
                throw ConfigError(
                    file: mainFile, key: "envoy_sds_directory",
                    "\(envoy) overlaps \(key) (\(other)): give the Envoy secrets a directory of their own")
            }
        }
    }

    /// `path` as the kernel would resolve it: its longest existing leading part through
    /// realpath (symlinks first, then `..`, as the kernel walks `/a/link/../b`), the rest with
    /// `.`, `..` and repeated slashes resolved as text. Split by Unicode scalars: a "/" followed
    /// by a combining mark is a separator to the kernel.
    static func resolved(_ path: String) -> String {
        var parts = path.unicodeScalars.split(separator: "/").map { String(String.UnicodeScalarView($0)) }
        var rest: [String] = []
        while true {
            if let real = realPath("/" + parts.joined(separator: "/")) {
                var resolved = real.unicodeScalars.split(separator: "/").map { String(String.UnicodeScalarView($0)) }
                for part in rest where part != "." {
                    if part == ".." { _ = resolved.popLast() } else { resolved.append(part) }
                }
                return "/" + resolved.joined(separator: "/")
            }
            guard let last = parts.popLast() else { return "/" + rest.filter { $0 != "." && $0 != ".." }.joined(separator: "/") }
            rest.insert(last, at: 0)
        }
    }

    private static func join(_ directory: String, _ name: String) -> String {
        directory.hasSuffix("/") ? directory + name : directory + "/" + name
    }
}
