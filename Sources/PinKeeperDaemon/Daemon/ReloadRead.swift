/// Everything a SIGHUP reload reads from disk, read on a thread of its own (`BlockingWork`): the
/// configuration files (and the directories `Daemon.reload` makes ready), and every store's
/// published file for the `CachedPins` check and its state and `ca_file` for `FetchSettings`. An
/// `open` that hangs on a stalled disk or a hung network mount would otherwise hold the
/// scheduling loop, and with it the watchdog pings; the loop gets the result as an event and
/// applies it without touching a file.
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
        /// Stores configured as before whose fetch settings differ from those their last fetch
        /// used (`FetchSettings`): new certificates in the same `ca_file`, a change made while
        /// the last fetch ran. Updated at once, as a changed store is.
        var settingsChanged: Set<String>
    }

    static func run(_ daemon: Daemon) async -> ReloadRead {
        await BlockingWork.run(named: "pinkeeper-reload") {
            ReloadRead(
                outcome: daemon.reload().map { configuration in
                    let updater = daemon.makeUpdater(configuration)
                    let now = daemon.clock.now()
                    let unreconciled = configuration.stores.filter { updater.reconcileCheck($0, now: now).needed }.map(\.id)
                    let settingsChanged = configuration.stores.filter {
                        FetchSettings.changeSinceLastFetch($0, recorded: updater.state.load(store: $0.id).fetchSettings) != nil
                    }
                    return Fresh(
                        configuration: configuration, updater: updater, unreconciled: Set(unreconciled),
                        settingsChanged: Set(settingsChanged.map(\.id)))
                })
        }
    }
}
