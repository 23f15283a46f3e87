import FoundationEssentials
import PinKeeper

/// The configuration files' contents when they were read, as digests: the main file and
/// `stores.d`'s drop-ins, through symlinks as `ConfigLoader` reads them. `ConfigWatcher` compares
/// the one of the running configuration's read with the files once its watches are in place (a
/// change made between the two reached no watch) and after events (which may change nothing).
/// Contents, not times: an edit in place within one clock tick keeps the size and the times.
public struct ConfigSnapshot: Equatable, Sendable {
    /// Path and content digest (nil: the file could not be read) of each file, the main one first.
    var files: [Entry]

    struct Entry: Equatable, Sendable {
        var path: String
        var digest: [UInt8]?
    }

    /// What `read` read: the files before it, when they are the same after it. nil when they
    /// changed during it, as the read may have seen either version: then no event is taken for
    /// "nothing changed" (a change back to the old files would otherwise look like none).
    public static func around<Value, Failure: Error>(
        configPath: String, _ read: () throws(Failure) -> Value
    ) throws(Failure) -> (value: Value, snapshot: ConfigSnapshot?) {
        let before = take(configPath: configPath)
        let value = try read()
        return (value, take(configPath: configPath) == before ? before : nil)
    }

    public static func take(configPath: String) -> ConfigSnapshot {
        let (directory, _) = WatchTarget.split(configPath)
        let dropIns = (try? ConfigLoader.dropInFiles(in: directory + "/stores.d")) ?? []
        return ConfigSnapshot(
            files: ([configPath] + dropIns).map { path in
                Entry(path: path, digest: FileContentDigest.sha256(ofFile: path))
            })
    }

    /// The files this snapshot read that `now` (the same files taken later, by the service user
    /// after root read them) cannot read, and the snapshot to compare with from now on: `now`
    /// when those files are the only difference (a reload will fail on them, which the caller says
    /// at start; comparing with root's read would take each event for a change), else this one.
    public func unreadable(in now: ConfigSnapshot) -> (paths: [String], compareWith: ConfigSnapshot) {
        let readNow = Dictionary(now.files.map { ($0.path, $0.digest) }, uniquingKeysWith: { first, _ in first })
        let lost = files.filter { $0.digest != nil && (readNow[$0.path] ?? nil) == nil }.map(\.path)
        let lostSet = Set(lost)
        let same = files.filter { !lostSet.contains($0.path) } == now.files.filter { !lostSet.contains($0.path) }
        return (lost, !lost.isEmpty && same ? now : self)
    }
}
