import Glibc

/// A directory to watch and the entries in it that make up the configuration.
struct WatchTarget: Equatable, Sendable {
    enum Entries: Equatable, Sendable {
        case named(Set<String>)
        /// What `ConfigLoader` reads from `stores.d/`: `*.toml`, not hidden.
        case dropIns
    }

    var directory: String
    var entries: Entries

    func contains(_ name: String) -> Bool {
        switch entries {
        case .named(let names): names.contains(name)
        case .dropIns: name.hasSuffix(".toml") && !name.hasPrefix(".")
        }
    }

    /// The main file's directory (its name, `stores.d` and kubelet's `..data` symlink), the
    /// directory the main file resolves to when that is another one (a file edited in place
    /// behind a symlink), and the directory `stores.d` resolves to now. Directories are watched
    /// where they resolve to, so one reached by two paths is one target.
    static func targets(configPath: String, resolve: (String) -> String?) -> [WatchTarget] {
        let (directory, name) = split(configPath)
        var byDirectory: [String: Set<String>] = [:]
        byDirectory[resolve(directory) ?? directory, default: []].formUnion([name, "stores.d", "..data"])
        if let real = resolve(configPath) {
            let (realDirectory, realName) = split(real)
            byDirectory[realDirectory, default: []].insert(realName)
        }
        var targets = byDirectory.keys.sorted().map { WatchTarget(directory: $0, entries: .named(byDirectory[$0]!)) }
        if let dropIns = resolve(directory + "/stores.d") { targets.append(WatchTarget(directory: dropIns, entries: .dropIns)) }
        return targets
    }

    /// The configuration path an event changed, or nil when it changed nothing the
    /// configuration is read from. A watch that ends (its directory deleted or moved away, as
    /// kubelet deletes the old files) and lost events count as changes; the end of a watch
    /// that is no longer in `watches` (removed by `rewatch`) does not.
    static func changedPath(_ event: Inotify.Event, _ watches: [Int32: WatchTarget]) -> String? {
        if event.has(IN_Q_OVERFLOW) { return "(changes lost: inotify queue overflow)" }
        guard let target = watches[event.watch] else { return nil }
        if event.has(IN_IGNORED) || event.has(IN_DELETE_SELF) || event.has(IN_MOVE_SELF) { return target.directory }
        return target.contains(event.name) ? target.directory + "/" + event.name : nil
    }

    /// Directory and last name, as the loader finds `stores.d` beside the main file.
    static func split(_ path: String) -> (String, String) {
        guard let slash = path.lastIndex(of: "/") else { return (".", path) }
        let directory = String(path[..<slash])
        return (directory.isEmpty ? "/" : directory, String(path[path.index(after: slash)...]))
    }
}
