public import Logging
import PinKeeper

/// What the outside world may ask of a running daemon (signals in production, a stream in tests).
public enum Trigger: Sendable {
    case terminate  // SIGTERM, SIGINT
    case reload  // SIGHUP
    case updateAll  // SIGUSR1
}

/// `pinkeeper run`: one loop that sleeps until the earliest due store, runs update passes
/// without ever blocking on them, pings the watchdog, and handles reload and shutdown.
public struct Daemon: Sendable {
    public var configuration: Configuration
    /// Re-reads the configuration on SIGHUP, on a thread of its own (`ReloadRead`): it may wait on the disk.
    public var reload: @Sendable () -> Result<Configuration, ConfigError>
    public var makeUpdater: @Sendable (Configuration) -> StoreUpdater
    /// Told each configuration a reload swaps in, on the loop, for what lives outside it (the log format).
    public var applied: @Sendable (Configuration) -> Void = { _ in }
    public var notifier: any ServiceNotifier
    public var clock: any WallClock
    public var logger: Logger
    /// Longest sleep without looking at the wall clock again (it may jump).
    public var maxSleep: Duration = .seconds(300)
    /// Where the loop's tasks run (nil: Swift's default executor). Unstructured tasks do not
    /// inherit a task executor preference, so the loop passes it on to each one it starts.
    public var executor: (any TaskExecutor)?

    public init(
        configuration: Configuration, reload: @escaping @Sendable () -> Result<Configuration, ConfigError>,
        makeUpdater: @escaping @Sendable (Configuration) -> StoreUpdater, notifier: any ServiceNotifier,
        clock: any WallClock = SystemClock(), logger: Logger
    ) {
        self.configuration = configuration
        self.reload = reload
        self.makeUpdater = makeUpdater
        self.notifier = notifier
        self.clock = clock
        self.logger = logger
    }

    enum Event: Sendable {
        case trigger(Trigger)
        case passFinished([StoreUpdater.Report])
        case probesFinished([String: StoreProbes])
        case secretsWritten([String: Int64])
        case reloadRead(ReloadRead)
        case tick
    }

    public func run(triggers: AsyncStream<Trigger>) async {
        let (events, input) = AsyncStream.makeStream(of: Event.self)
        let forwarder = Task(executorPreference: executor) { for await trigger in triggers { input.yield(.trigger(trigger)) } }
        defer { forwarder.cancel() }
        var loop = DaemonLoop(daemon: self, input: input)
        await loop.run(events: events)
        await loop.metrics.settle(within: .milliseconds(250))
    }
}

/// The loop's mutable state, owned by the one task that runs it.
struct DaemonLoop {
    let daemon: Daemon
    let input: AsyncStream<Daemon.Event>.Continuation
    var config: Configuration
    var updater: StoreUpdater
    var due: [String: Int64] = [:]
    var status: [String: StatusLine.Entry] = [:]
    var pass: Task<Void, Never>?
    /// What a reload or SIGUSR1 took out of the running pass's hands.
    var superseded = SupersededStores()
    var probes: ProbeSchedule
    /// Fetches that unpinned or expiring probes ask for (`min_probe_refresh`, the back-off).
    var probeRefresh = ProbeRefresh()
    /// Envoy secrets: when each store's must be written again (a pin expires), and the secrets
    /// that must match nothing from now on (a store that left the configuration, every store of
    /// an `envoy_sds_directory` a reload left), each with the directory's writer. One sync task at
    /// a time, off the loop.
    var secretsDue: [String: Int64] = [:]
    var secretsRetired: [(directory: EnvoySecretSync, store: String)] = []
    var secretsTask: Task<Void, Never>?
    /// A reload's files are being read off the loop (`ReloadRead`).
    var reloadReading = false
    /// A SIGHUP came while they were: that read may predate the change the signal announces.
    var rereadAfterReload = false
    /// RELOADING=1 was sent for the reload being read (a SIGHUP came after READY=1): READY=1 ends it.
    var reloadAnnounced = false
    var ready = false
    var stopping = false
    var timer: Task<Void, Never>?
    let watchdogHalfPeriod: Duration?
    var nextPing = ContinuousClock.now
    /// Off the loop: a stalled disk must not hold up the watchdog pings.
    let metrics: MetricsWriter

    init(daemon: Daemon, input: AsyncStream<Daemon.Event>.Continuation) {
        self.daemon = daemon
        self.input = input
        self.config = daemon.configuration
        self.updater = daemon.makeUpdater(daemon.configuration)
        self.probes = ProbeSchedule(
            configuration: daemon.configuration, state: ProbeStateDirectory(path: daemon.configuration.stateDirectory),
            now: daemon.clock.now())
        self.watchdogHalfPeriod = daemon.notifier.watchdogMicroseconds.map { .microseconds(Int64($0 / 2)) }
        self.metrics = MetricsWriter(logger: daemon.logger)
    }

    var logger: Logger { daemon.logger }

    mutating func run(events: AsyncStream<Daemon.Event>) async {
        start()
        var iterator = events.makeAsyncIterator()
        while true {
            if ready && pass == nil && !stopping { startDuePass() }
            if ready && !stopping { startDueProbes() }
            if !stopping { startDueSecrets() }
            armTimer()
            guard let event = await iterator.next() else { return }
            pingWatchdog()
            switch event {
            case .tick:
                if stopping { return }  // in-flight work did not finish within the grace period
            case .passFinished(let reports):
                apply(reports)
                if stopping && !probes.isRunning { return }
            case .secretsWritten(let next):
                secretsTask = nil
                for (store, at) in next where config.store(store) != nil { secretsDue[store] = min(secretsDue[store] ?? at, at) }
            case .probesFinished(let results):
                if stopping {
                    probes.finished([:])  // a stop's results are not acted on
                    if pass == nil { return }
                    continue
                }
                probes.finished(results)
                probesRecorded(results)
                publishStatus(now: daemon.clock.now())
            case .trigger(.terminate):
                daemon.notifier.notify("STOPPING=1")
                logger.info("stopping")
                // Both passes are cut short and waited for, within the grace period: a probe's
                // handshake ends within 200 ms, and results being written are written whole.
                probes.cancel()
                guard pass != nil || probes.isRunning else { return }
                stopping = true
                pass?.cancel()  // reaches libcurl at once; publishing is atomic, so nothing is left half-written
            case .trigger(.updateAll):
                logger.info("updating every store now (SIGUSR1)")
                for store in config.stores { schedule(store.id, at: daemon.clock.now()) }
                probes.probeNow(now: daemon.clock.now())
            case .trigger(.reload):
                requestReload()
            case .reloadRead(let read):
                if stopping { continue }
                finishReload(read)
            }
        }
    }

    /// Every store's due time from its files; READY at once, or after a first pass over the
    /// stores that have nothing valid to offer readers.
    private mutating func start() {
        let now = daemon.clock.now()
        var urgent: [StoreConfig] = []
        for store in config.stores {
            // A removed key's pins go before anything else happens: the store is updated at once,
            // and the update publishes the reduced file under the store's lock before it fetches.
            // Read once: the check and the due time both work from this version of the file.
            let cache = updater.cache.load(store: store.id, now: now)
            let reconcile = updater.reconcileCheck(store, loaded: cache).needed
            var (dueAt, hasPins) = load(store, cache: cache, now: now)
            if reconcile { dueAt = now }
            due[store.id] = dueAt
            // READY also waits for a removed key's pins to leave the file.
            if (!hasPins && dueAt <= now) || reconcile { urgent.append(store) }
        }
        if updater.envoy != nil { for store in config.stores { secretsDue[store.id] = now } }
        logger.info(
            "pinkeeper started",
            metadata: [
                "version": "\(PinKeeperVersion.string)", "stores": "\(config.stores.count)", "cache_directory": "\(config.cacheDirectory)",
            ])
        // READY waits for one attempt at every store that has nothing valid to offer readers.
        if urgent.isEmpty { becomeReady() } else { startPass(urgent) }
    }

    // MARK: Passes

    private mutating func startDuePass() {
        let now = daemon.clock.now()
        let stores = config.stores.filter { (due[$0.id] ?? now) <= now }
        if !stores.isEmpty { startPass(stores) }
    }

    private mutating func startPass(_ stores: [StoreConfig]) {
        // From the configuration in force now, so a reload changes it for the next pass.
        let updater = self.updater, input = self.input, concurrency = config.concurrency
        let superseded = SupersededStores()
        self.superseded = superseded
        let probeRefreshes = probeRefreshesStarting(stores)
        pass = Task(executorPreference: daemon.executor) {
            let reports = await UpdatePass.run(
                stores, updater: updater, concurrency: concurrency,
                skip: superseded.skips, probeRefresh: probeRefreshes)
            input.yield(.passFinished(reports))
        }
    }

    /// Sets a store's due time (nil: no longer configured). A running pass neither starts the
    /// store any more nor, when it ends, replaces this due time with its own result.
    mutating func schedule(_ id: String, at time: Int64?) {
        due[id] = time
        probeRefresh.overridden(id)
        if pass != nil { superseded.insert(id) }
    }

    private mutating func apply(_ reports: [StoreUpdater.Report]) {
        pass = nil
        let now = daemon.clock.now()
        // Stores a reload changed or SIGUSR1 asked for keep the due time that was set then.
        for report in reports where config.store(report.store) != nil && !superseded.contains(report.store) {
            due[report.store] = report.nextAttempt
            // New pins may change a probe's answer.
            if report.result == .ok && !report.notModified { probes.probeNow([report.store], now: now) }
            // The update wrote the secrets after publishing; this learns when they change next.
            if updater.envoy != nil { secretsDue[report.store] = now }
            let health: StoreHealth = report.pins == 0 ? .empty : (report.result == .ok ? .fresh : .failing)
            status[report.store] = .init(
                store: report.store, health: health,
                reason: report.result == .ok ? nil : report.result.rawValue)
        }
        updatesRecorded(reports)
        if ready {
            publishStatus(now: now)
        } else if let owed = startUpOwed(now: now), !stopping {
            startPass(owed)
        } else {
            becomeReady()
        }
    }

    private mutating func becomeReady() {
        ready = true
        publishStatus(now: daemon.clock.now())
        daemon.notifier.notify("READY=1")
    }

    func publishStatus(now: Int64) {
        let entries = config.stores.compactMap { status[$0.id] }
        let next = due.values.min().map { max(0, $0.saturatingSubtracting(now)) }
        daemon.notifier.notify("STATUS=" + StatusLine.make(entries, nextUpdateIn: next) + ProbeStatus.statusLineSuffix(config))
        metrics.request(configuration: config, now: now)
    }

    private mutating func startDueProbes() {
        let input = self.input
        let runner = ProbeRunner(configuration: config, clock: daemon.clock, random: updater.random, logger: logger)
        probes.startDue(
            configuration: config, now: daemon.clock.now(), runner: runner, concurrency: config.concurrency,
            executor: daemon.executor
        ) {
            input.yield(.probesFinished($0))
        }
    }

    /// Writes the Envoy secrets of the stores whose pins expired (or whose file changed) off
    /// the loop, one task at a time; the stores it covers are due again when it reports.
    private mutating func startDueSecrets() {
        guard secretsTask == nil else { return }
        let envoy = updater.envoy, now = daemon.clock.now()
        let stores = envoy == nil ? [] : config.stores.filter { (secretsDue[$0.id] ?? Int64.max) <= now }
        let retired = secretsRetired
        guard !stores.isEmpty || !retired.isEmpty else { return }
        for store in stores { secretsDue[store.id] = nil }
        secretsRetired = []
        let input = self.input
        secretsTask = Task(executorPreference: daemon.executor) {
            let next = await BlockingWork.run { () -> [String: Int64] in
                for (directory, id) in retired { directory.retire(id) }
                var next: [String: Int64] = [:]
                for store in stores { next[store.id] = envoy?.sync(store, now: now) }
                return next
            }
            input.yield(.secretsWritten(next))
        }
    }

    // MARK: Disk

    /// Due time and whether valid pins exist, from the published file (`loaded`) and the state file.
    private mutating func load(_ store: StoreConfig, cache loaded: CacheDirectory.Loaded, now: Int64) -> (Int64, Bool) {
        let cache: CacheFile?
        if case .valid(let file) = loaded { cache = file } else { cache = nil }
        let state = updater.state.load(store: store.id)
        if state.consecutiveFailures > 0 { probeRefresh.restore(store.id, retryAt: state.retryAt) }
        let validPins = cache?.list.pins.filter { !$0.isExpired(at: now) }.count ?? 0
        let health = StoreHealth.of(
            validPins: validPins, lastResult: state.lastResult, lastSuccess: state.lastSuccess,
            now: now, periodicUpdateInterval: store.policy.periodicUpdateInterval)
        status[store.id] = .init(store: store.id, health: health, reason: state.lastResult == .ok ? nil : state.lastResult?.rawValue)
        var due = DueTime.of(cache: cache, state: state, policy: store.policy, now: now)
        // Changed while the daemon was stopped: fetch at once, as a reload that changed it would,
        // not days later.
        if let change = DueTime.changeSinceLastUpdate(store, cache: cache, state: state, validPins: validPins) {
            logger.info("\(change)", metadata: ["store": "\(store.id)"])
            due = min(due, now)
        }
        return (due, validPins > 0)
    }

    // MARK: Time

    private mutating func armTimer() {
        timer?.cancel()
        var sleep: Duration
        if stopping {
            sleep = .milliseconds(900)
        } else {
            let now = daemon.clock.now()
            var next = ready && pass == nil ? (due.values.min() ?? Int64.max) : Int64.max
            if ready, let probeDue = probes.nextDue { next = min(next, probeDue) }
            if secretsTask == nil, let secretsAt = secretsDue.values.min() { next = min(next, secretsAt) }
            sleep = next == Int64.max ? daemon.maxSleep : min(.seconds(max(0, next.saturatingSubtracting(now))), daemon.maxSleep)
        }
        if watchdogHalfPeriod != nil, !stopping {
            sleep = min(sleep, max(.zero, nextPing - ContinuousClock.now))
        }
        let input = self.input
        timer = Task(executorPreference: daemon.executor) {
            guard (try? await ThreadSleep.sleep(for: sleep)) != nil else { return }
            input.yield(.tick)
        }
    }

    /// The loop itself pings, so a wedged loop stops the pings and systemd restarts us.
    private mutating func pingWatchdog() {
        guard let watchdogHalfPeriod, ContinuousClock.now >= nextPing else { return }
        daemon.notifier.notify("WATCHDOG=1")
        nextPing = ContinuousClock.now + watchdogHalfPeriod
    }
}
