import FoundationEssentials
import PinKeeper

/// The configuration files' contents when they were read, as digests: the main file and
/// `stores.d`'s drop-ins, through symlinks as `ConfigLoader` reads them. `ConfigWatcher` compares
/// one taken before a read with one taken once its watches are in place: a change made between
/// the two reached no watch. Contents, not times: an edit in place within one clock tick keeps
/// the size and the times.
public struct ConfigSnapshot: Equatable, Sendable {
    /// Path and content digest (nil: the file could not be read) of each file, the main one first.
    var files: [Entry]

    struct Entry: Equatable, Sendable {
        var path: String
        var digest: [UInt8]?
    }

    public static func take(configPath: String) -> ConfigSnapshot {
        let (directory, _) = WatchTarget.split(configPath)
        let dropIns = (try? ConfigLoader.dropInFiles(in: directory + "/stores.d")) ?? []
        return ConfigSnapshot(
            files: ([configPath] + dropIns).map { path in
                Entry(path: path, digest: FileManager.default.contents(atPath: path).map { SHA256.digest(Array($0)) })
            })
    }
}
