import ArgumentParser
import Glibc
import PinKeeperDaemon
import Synchronization
import Logging

struct Run: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Run the daemon in the foreground until SIGTERM or SIGINT (systemd runs it this way).",
        discussion: """
            Creates the cache and state directories when missing. Exit status: 0 after a clean stop; \
            71 the kernel refused the timer or signal pipe the daemon needs (open-file limit); 73 the cache or \
            state directory cannot be created or written; 78 invalid configuration.
            """)

    @OptionGroup var global: GlobalOptions

    // The container image's CMD: a ConfigMap mounted over /etc/pinkeeper replaces the image's
    // own pinkeeper.toml, and with it the image's watch_configuration = true.
    @Flag(
        name: .long,
        help: """
            Watch the configuration files (reload when they change) unless the configuration sets \
            watch_configuration = false; without this option an absent watch_configuration means no watching.
            """)
    var watchConfiguration = false

    func run() async throws {
        // What each read of the configuration read, for ConfigWatcher (changes it did not see, and
        // events that changed nothing).
        let (configuration, firstRead) = try ConfigSnapshot.around(configPath: global.configPath) {
            try global.loadConfiguration(watchByDefault: watchConfiguration)
        }
        // EX_CANTCREAT: systemd restarts the service (only 78 stops it), which may find the directory fixed.
        try global.workAsServiceUser(configuration, failureStatus: 73)
        try global.prepareDirectories(configuration, failureStatus: 73)
        let logger = global.makeLogger(configuration)
        let lastRead = Mutex(Self.checkServiceUserReads(firstRead, configPath: global.configPath, logger: logger))
        let (triggers, input) = AsyncStream.makeStream(of: Trigger.self)
        let signals: SignalWatcher
        do {
            signals = try SignalWatcher { signal in
                switch signal {
                case SIGHUP: input.yield(.reload)
                case SIGUSR1: input.yield(.updateAll)
                default: input.yield(.terminate)
                }
            }
        } catch {
            logger.critical("\(error)")
            throw ExitCode(71)  // EX_OSERR: systemd restarts the service
        }
        let path = global.configPath
        let watchByDefault = watchConfiguration
        // One for the daemon's lifetime: a reload must not lose track of a store's running hook.
        let hooks = ChangeHooks(logger: logger, configurationFiles: configuration.sources)
        var daemon = Daemon(
            configuration: configuration,
            reload: {
                Result { () throws(ConfigError) in
                    let (configuration, snapshot) = try ConfigSnapshot.around(configPath: path) { () throws(ConfigError) in
                        try Self.reload(path, watchByDefault: watchByDefault)
                    }
                    lastRead.withLock { $0 = snapshot }
                    return configuration
                }
            },
            makeUpdater: { makeUpdater($0, logger: logger, hooks: hooks) },
            notifier: SystemdNotifier(), logger: logger)
        daemon.executor = ThreadPoolExecutor.shared
        // watch_configuration: a changed file reloads as SIGHUP does; a reload may turn it on or off.
        let configWatcher = ConfigWatcher(configPath: path, logger: logger) { file in
            logger.info("configuration changed; reloading", metadata: ["file": "\(file)"])
            input.yield(.reload)
        }
        configWatcher.set(enabled: configuration.watchConfiguration, readFrom: lastRead.withLock { $0 })
        let options = global
        daemon.applied = { configuration in
            options.apply(configuration)
            hooks.use(configurationFiles: configuration.sources)
            configWatcher.set(enabled: configuration.watchConfiguration, readFrom: lastRead.withLock { $0 })
        }
        await daemon.run(triggers: triggers)
        await hooks.stop()  // within the kill grace, well inside the unit's TimeoutStopSec=
        withExtendedLifetime(signals) {}
    }

    /// Read as root, the configuration may be closed to the service user it now works as: say so
    /// at start, naming the file, rather than at the first reload, and let the watcher compare
    /// with what the service user reads (else every event would look like a change): the
    /// snapshot the watcher compares with.
    private static func checkServiceUserReads(_ read: ConfigSnapshot?, configPath: String, logger: Logger) -> ConfigSnapshot? {
        guard let read else { return nil }
        let (unreadable, compareWith) = read.unreadable(in: ConfigSnapshot.take(configPath: configPath))
        for path in unreadable {
            logger.warning(
                "the service user cannot read this configuration file: a reload would fail; let it read the file (group or mode 0644)",
                metadata: ["file": "\(path)"])
        }
        return compareWith
    }

    /// A reloaded configuration may name new directories: they are made ready before it is
    /// accepted, or the reload fails and the running configuration stays.
    private static func reload(_ path: String, watchByDefault: Bool) throws(ConfigError) -> Configuration {
        let configuration = try ConfigLoader.load(path: path, watchByDefault: watchByDefault)
        do {
            try DataDirectories.prepare(configuration)
        } catch {
            throw ConfigError(file: path, key: error.key, error.description)
        }
        return configuration
    }
}
