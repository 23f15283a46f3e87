/// Everything a SIGHUP reload reads from disk, read on a thread of its own (`BlockingWork`): the
/// configuration files (and the directories `Daemon.reload` makes ready) and every store's
/// published file for the `CachedPins` check. An `open` that hangs on a stalled disk or a hung
/// network mount would otherwise hold the scheduling loop, and with it the watchdog pings; the
/// loop gets the result as an event and applies it without touching a file.
struct ReloadRead: Sendable {
    /// The configuration read, ready to swap in; or why it was rejected.
    var outcome: Result<Fresh, ConfigError>

    struct Fresh: Sendable {
        var configuration: Configuration
        /// Made for the new configuration (its directories), as the loop would make it.
        var updater: StoreUpdater
        /// Stores whose published file the new configuration would change (a removed key's
        /// pins, say): updated at once even when nothing else about them changed.
        var unreconciled: Set<String>
    }

    static func run(_ daemon: Daemon) async -> ReloadRead {
        await BlockingWork.run(named: "pinkeeper-reload") {
            ReloadRead(
                outcome: daemon.reload().map { configuration in
                    let updater = daemon.makeUpdater(configuration)
                    let now = daemon.clock.now()
                    let unreconciled = configuration.stores.filter { updater.reconcileCheck($0, now: now).needed }.map(\.id)
                    return Fresh(configuration: configuration, updater: updater, unreconciled: Set(unreconciled))
                })
        }
    }
}
