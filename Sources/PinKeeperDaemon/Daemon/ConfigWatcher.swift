import Glibc
public import Logging
import Synchronization

/// `watch_configuration`: notices that the configuration file or `stores.d/` changed and hands
/// the changed path to `onChange`, which `run` turns into the same reload as SIGHUP. Kubernetes
/// replaces a mounted ConfigMap by renaming a new `..data` symlink over the old one and then
/// deleting the old files, editors rename a new file over the old or write it in place: inotify
/// on the directories sees each of them. A burst of changes is acted on once, 500 ms after the
/// last (`Debounce`), and the watches are set up again before `onChange`, because the directories
/// the paths resolve to may just have been replaced; anything changed after that is seen again.
/// A change made after the configuration was read but before the watches existed (at start, or
/// before a reload turned watching on) reaches no watch: the snapshot of that read is compared
/// with the files once the watches are in place. The same comparison decides after every burst:
/// an event is not a change. A writer that closes its file after the daemon read it (podman's
/// `kube play` closes the ConfigMap files it wrote once the containers run), a touch, or a
/// ConfigMap version with the same files leaves the running configuration as it is.
public final class ConfigWatcher: Sendable {
    static let quiet: Duration = .milliseconds(500)
    static let longest: Duration = .seconds(5)
    static let mask = Int32(
        IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_CLOSE_WRITE | IN_ATTRIB | IN_DELETE_SELF | IN_MOVE_SELF)

    private let configPath: String
    private let logger: Logger
    private let onChange: @Sendable (String) -> Void
    private let state = Mutex((enabled: false, started: false, read: ConfigSnapshot?.none))

    public init(configPath: String, logger: Logger, onChange: @escaping @Sendable (String) -> Void) {
        self.configPath = configPath
        self.logger = logger
        self.onChange = onChange
    }

    /// From `watch_configuration`, at start and after every reload, with the snapshot of what that
    /// read read (nil: the files changed during the read, so any event is taken for a change).
    /// The thread starts the first time it is turned on and then stays, asleep in `poll` between
    /// changes, keeping its watches current; while off, changes are not acted on.
    public func set(enabled: Bool, readFrom snapshot: ConfigSnapshot?) {
        let (start, turnedOn) = state.withLock { state in
            defer { (state.enabled, state.read, state.started) = (enabled, snapshot, state.started || enabled) }
            return (enabled && !state.started, enabled && state.started && !state.enabled)
        }
        if start { BlockingWork.start(named: "pinkeeper-watch") { [self] in watch() } }
        // The running thread's watches are current; the files are read off the caller's thread
        // (the daemon loop), which a stalled disk must never hold.
        if turnedOn { BlockingWork.start(named: "pinkeeper-watch") { [self] in reloadIfChangedSinceRead(Self.beforeWatched) } }
    }

    /// What `onChange` gets for a change made before the watches saw it.
    static let beforeWatched = "(changed before it was watched)"

    /// Hands `path` to `onChange` unless the files are still those the running configuration
    /// was read from.
    private func reloadIfChangedSinceRead(_ path: String) {
        let (enabled, read) = state.withLock { ($0.enabled, $0.read) }
        guard enabled else { return }
        if let read, ConfigSnapshot.take(configPath: configPath) == read {
            if path != Self.beforeWatched {
                logger.debug("configuration files unchanged; not reloading", metadata: ["file": "\(path)"])
            }
            return
        }
        onChange(path)
    }

    private func watch() {
        let inotify: Inotify
        do {
            inotify = try Inotify()
        } catch {
            logger.error("configuration changes are not watched; reload with SIGHUP", metadata: ["reason": "\(error)"])
            return
        }
        var watches = rewatch(inotify, replacing: [:])
        reloadIfChangedSinceRead(Self.beforeWatched)
        var debounce = Debounce(quiet: Self.quiet, longest: Self.longest)
        var changed: String?
        while true {
            for event in inotify.wait(milliseconds: debounce.pollTimeout(.now)) {
                guard let path = WatchTarget.changedPath(event, watches) else { continue }
                debounce.note(.now)
                changed = changed ?? path
            }
            guard debounce.isDue(.now) else { continue }
            debounce.reset()
            watches = rewatch(inotify, replacing: watches)
            if let path = changed { reloadIfChangedSinceRead(path) }
            changed = nil
        }
    }

    /// Watches what the paths resolve to now and drops the watches no longer needed.
    private func rewatch(_ inotify: Inotify, replacing old: [Int32: WatchTarget]) -> [Int32: WatchTarget] {
        var watches: [Int32: WatchTarget] = [:]
        for target in WatchTarget.targets(configPath: configPath, resolve: realPath) {
            switch inotify.watch(target.directory, mask: Self.mask) {
            case .success(let watch): watches[watch] = target
            case .failure(let error) where error.code == ENOENT || error.code == ENOTDIR: continue  // no stores.d: nothing to watch
            case .failure(let error):
                logger.warning(
                    "configuration changes in a directory are not watched; reload with SIGHUP",
                    metadata: ["file": "\(target.directory)", "reason": "\(error)"])
            }
        }
        for watch in old.keys where watches[watch] == nil { inotify.remove(watch) }
        return watches
    }
}
