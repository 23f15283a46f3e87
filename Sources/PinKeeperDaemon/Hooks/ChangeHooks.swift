public import FoundationEssentials
import Glibc
public import Logging
import Synchronization

/// Runs a store's `on_change` hook after a publish that changed its pins, for `run` and
/// `update` alike. Each run gets a thread of its own (see `HookProcess`), so neither the update
/// loop nor the watchdog ever waits for a hook. Never two at once for one store: a change while
/// the store's hook runs is remembered, and the hook runs once more when it ends (with the
/// newest values), however many changes came meanwhile.
public final class ChangeHooks: Sendable {
    /// How long a hook has after SIGTERM before SIGKILL.
    public static let killGrace: Duration = .seconds(5)
    /// Bytes of stdout and of stderr kept for the log, per run.
    static let outputLimit = 4_096

    struct Request: Sendable {
        var store: String
        var argv: [String]
        var timeout: Duration
        var environment: [String]
        /// The configuration files that named the hook: as root, nobody else may change them either.
        var configurationFiles: [String]
    }
    private struct State {
        var running: Set<String> = []
        var owed: [String: Request] = [:]
        var idleWaiters: [CheckedContinuation<Void, Never>] = []
        /// The daemon is stopping: running hooks are ended now, owed runs dropped, none started.
        var stopping = false
        /// The files of the configuration in force (a reload may add or remove drop-ins).
        var configurationFiles: [String]
    }
    private let state: Mutex<State>
    private let logger: Logger
    private let grace: Duration
    private let environment: [String: String]
    /// Only a program nobody else can change is run (`HookTrust`); by default when running as root.
    private let checksOwnership: Bool

    public init(
        logger: Logger, killGrace: Duration = ChangeHooks.killGrace,
        environment: [String: String] = ProcessInfo.processInfo.environment,
        checksOwnership: Bool? = nil, configurationFiles: [String] = []
    ) {
        self.state = Mutex(State(configurationFiles: configurationFiles))
        self.logger = logger
        self.grace = killGrace
        self.environment = environment
        self.checksOwnership = checksOwnership ?? HookTrust.runningAsRoot
    }

    /// After a reload: the files the configuration now in force was read from.
    public func use(configurationFiles: [String]) {
        state.withLock { $0.configurationFiles = configurationFiles }
    }

    /// Called after `store`'s pins changed and were published; returns at once.
    public func pinsChanged(_ store: StoreConfig, cacheFile: String, pins: Int) {
        guard let argv = store.policy.onChange else { return }
        let request = Request(
            store: store.id, argv: argv, timeout: .seconds(store.policy.hookTimeout),
            environment: HookEnvironment.make(
                store: store.id, cacheFile: cacheFile, pins: pins,
                from: environment),
            configurationFiles: state.withLock { $0.configurationFiles })
        let start = state.withLock { state in
            guard !state.stopping else { return false }
            guard state.running.insert(store.id).inserted else {
                state.owed[store.id] = request
                return false
            }
            return true
        }
        if start {
            BlockingWork.start(named: "pinkeeper-hook") { self.runAll(from: request) }
        } else {
            logger.debug("pins changed while the change hook runs; it will run once more", metadata: ["store": "\(store.id)"])
        }
    }

    /// Waits until no hook runs and none is owed (`pinkeeper update`). Each run ends within its
    /// `hook_timeout` plus twice the kill grace, so this wait is bounded too.
    public func finish() async {
        await withCheckedContinuation { continuation in
            let idle = state.withLock { state in
                if state.running.isEmpty { return true }
                state.idleWaiters.append(continuation)
                return false
            }
            if idle { continuation.resume() }
        }
    }

    /// For a stopping daemon: ends running hooks now (SIGTERM, SIGKILL 1 s later: `HookProcess`)
    /// rather than at their timeout, which may be longer than systemd waits for the stop, drops
    /// owed runs, and waits for the ends.
    public func stop() async {
        state.withLock { state in
            state.stopping = true
            state.owed = [:]
        }
        await finish()
    }

    private func runAll(from first: Request) {
        var request = first
        while true {
            // Checked before every run: the file may have changed since the configuration was read.
            if checksOwnership, let problem = HookTrust.problem(argv: request.argv, configurationFiles: request.configurationFiles) {
                refuse(request, because: problem)
            } else {
                let outcome = HookProcess.run(
                    argv: request.argv, environment: request.environment, timeout: request.timeout,
                    grace: grace, outputLimit: Self.outputLimit,
                    stop: { self.state.withLock { $0.stopping } })
                log(outcome, of: request)
            }
            let (next, waiters) = state.withLock { state -> (Request?, [CheckedContinuation<Void, Never>]) in
                if let owed = state.owed.removeValue(forKey: request.store) { return (owed, []) }
                state.running.remove(request.store)
                guard state.running.isEmpty else { return (nil, []) }
                defer { state.idleWaiters = [] }
                return (nil, state.idleWaiters)
            }
            waiters.forEach { $0.resume() }
            guard let next else { return }
            request = next
        }
    }

    /// The pins were published all the same; only the hook is skipped.
    private func refuse(_ request: Request, because problem: String) {
        logger.warning(
            "change hook not run: as root, pinkeeper runs only a hook whose every file only root can change",
            metadata: [
                "event": "\(LogEventID.hookFailed.rawValue)", "store": "\(request.store)", "hook": "\(request.argv[0])",
                "reason": "\(problem)",
            ])
    }

    private func log(_ outcome: HookProcess.Outcome, of request: Request) {
        var metadata: Logger.Metadata = [
            "event": "\((outcome.succeeded ? LogEventID.hookFinished : LogEventID.hookFailed).rawValue)",
            "store": "\(request.store)", "hook": "\(request.argv[0])", "duration": "\(Self.seconds(outcome.duration))",
        ]
        switch outcome.end {
        case .exited(let status): metadata["exit_status"] = "\(status)"
        case .signalled(let signal): metadata["signal"] = "\(Self.signalName(signal))"
        case .notStarted(let error): metadata["reason"] = "cannot start it: \(String(cString: strerror(error)))"
        case .unreaped: metadata["reason"] = "still running after SIGKILL; left behind"
        case .lost: metadata["reason"] = "its exit status was collected elsewhere"
        }
        if outcome.stopped { metadata["reason"] = "ended early: pinkeeper is stopping" }
        if outcome.timedOut {
            metadata["timed_out"] = "true"
            metadata["hook_timeout"] = "\(Units.describe(seconds: request.timeout.components.seconds))"
        }
        if !outcome.stdout.isEmpty { metadata["stdout"] = "\(outcome.stdout.text)" }
        if !outcome.stderr.isEmpty { metadata["stderr"] = "\(outcome.stderr.text)" }
        if outcome.succeeded {
            logger.info("change hook finished", metadata: metadata)
        } else {
            // The pins were published all the same: a failing hook never fails the update.
            logger.warning("change hook failed", metadata: metadata)
        }
    }

    static func seconds(_ duration: Duration) -> String {
        let milliseconds = duration.components.seconds * 1_000 + duration.components.attoseconds / 1_000_000_000_000_000
        return cFormat("%.3fs", Double(milliseconds) / 1_000)
    }

    static func signalName(_ signal: Int32) -> String {
        let names: [Int32: String] = [
            SIGTERM: "SIGTERM", SIGKILL: "SIGKILL", SIGINT: "SIGINT", SIGHUP: "SIGHUP",
            SIGSEGV: "SIGSEGV", SIGABRT: "SIGABRT", SIGPIPE: "SIGPIPE", SIGBUS: "SIGBUS",
        ]
        return names[signal] ?? "signal \(signal)"
    }
}
