import Logging
import PinKeeper

extension DaemonLoop {
    // MARK: Reload

    /// SIGHUP: RELOADING=1 at once, for every signal (each stamped after its signal, so that
    /// systemd sees its own answered), and the files read off the loop (`ReloadRead`). A SIGHUP
    /// while a read runs starts no second one: when it ends, its result is dropped and the files
    /// are read once more, so that only the newest configuration is applied, with one READY=1.
    /// Before the first READY=1 (start-up still waits for stores without valid pins) the reload
    /// is silent: systemd's reload protocol starts from an active unit, and a READY=1 after the
    /// reload would announce a start-up that has not finished (or, when start-up ended during
    /// the read, answer a RELOADING=1 never sent).
    mutating func requestReload() {
        if ready {
            daemon.notifier.notify("RELOADING=1\nMONOTONIC_USEC=\(SystemdNotifier.monotonicMicroseconds())")
            reloadAnnounced = true
        }
        if reloadReading { rereadAfterReload = true } else { startReload() }
    }

    mutating func startReload() {
        reloadReading = true
        rereadAfterReload = false
        let daemon = self.daemon, input = self.input
        Task(executorPreference: daemon.executor) { input.yield(.reloadRead(await ReloadRead.run(daemon))) }
    }

    mutating func finishReload(_ read: ReloadRead) {
        if rereadAfterReload { return startReload() }
        reloadReading = false
        switch read.outcome {
        case .failure(let error):
            logger.error("reload failed; keeping the running configuration", metadata: ["reason": "\(error)"])
        case .success(let fresh):
            swapIn(fresh)
        }
        publishStatus(now: daemon.clock.now())
        // A silent reload (begun before READY=1) answers nothing, even if start-up ended meanwhile.
        if reloadAnnounced { daemon.notifier.notify("READY=1") }
        reloadAnnounced = false
    }

    /// Stores added, changed, with a file to reconcile or fetch settings their last fetch did not
    /// use are due now; removed ones are dropped.
    mutating func swapIn(_ fresh: ReloadRead.Fresh) {
        let now = daemon.clock.now()
        let old = config, oldEnvoy = updater.envoy
        config = fresh.configuration
        updater = fresh.updater
        probes.reconfigure(from: old, to: config, now: now)
        for store in config.stores {
            let unchanged = old.store(store.id) == store
            if unchanged && fresh.settingsChanged.contains(store.id) {
                logger.info("\(FetchSettings.changeNotice)", metadata: ["store": "\(store.id)"])
            } else if unchanged && !fresh.unreconciled.contains(store.id) {
                continue
            }
            schedule(store.id, at: now)  // added or changed: fetch from the (new) source now
        }
        for store in old.stores where config.store(store.id) == nil {
            schedule(store.id, at: nil)
            status[store.id] = nil
            secretsDue[store.id] = nil
        }
        retireSecrets(of: old, in: oldEnvoy)
        probeRefresh.retain(Set(config.stores.map(\.id)))
        secretsDue = [:]
        if updater.envoy != nil { for store in config.stores { secretsDue[store.id] = now } }
        daemon.applied(config)
        logger.info("configuration reloaded", metadata: ["stores": "\(config.stores.count)"])
    }

    /// Secrets Envoy may still read must match nothing once no store keeps them: those of the
    /// stores that left, and all of them when `envoy_sds_directory` moved or was removed (Envoy
    /// keeps what it read last from a directory nobody writes any more).
    private mutating func retireSecrets(of old: Configuration, in oldEnvoy: EnvoySecretSync?) {
        guard let oldEnvoy else { return }
        let moved = oldEnvoy.writer.directory != updater.envoy?.writer.directory
        if moved {
            logger.notice(
                "envoy_sds_directory changed; the Envoy secrets left in the old one now match no certificate",
                metadata: ["directory": "\(oldEnvoy.writer.directory)"])
        }
        for store in old.stores where moved || config.store(store.id) == nil { secretsRetired.append((oldEnvoy, store.id)) }
    }

    /// The stores the start-up pass left out because a reload (or SIGUSR1) came first, and
    /// that are due now under the configuration in force: READY=1 waits for their first
    /// attempt too, as it would have without the signal. nil: none.
    func startUpOwed(now: Int64) -> [StoreConfig]? {
        let leftOut = superseded.leftOut
        let owed = config.stores.filter { leftOut.contains($0.id) && (due[$0.id] ?? Int64.max) <= now }
        return owed.isEmpty ? nil : owed
    }
}
