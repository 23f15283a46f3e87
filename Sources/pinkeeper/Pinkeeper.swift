public import ArgumentParser
import FoundationEssentials
import Logging
import PinKeeper
import PinKeeperDaemon

/// The root command; `Main` is the entry point.
struct Pinkeeper: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pinkeeper",
        abstract: "Keeps dynamic SSL-pinning databases fresh for local processes.",
        version: PinKeeperVersion.string,
        subcommands: [Run.self, Update.self, Import.self, CheckConfig.self, Status.self, Validate.self, Probe.self])
}

struct GlobalOptions: ParsableArguments {
    @Option(name: .long, help: "Configuration file (default: $PINKEEPER_CONFIG or /etc/pinkeeper/pinkeeper.toml).")
    var config: String?

    @Option(name: .long, help: "Least severe messages to log: trace, debug, info, notice, warning, error, critical.")
    var logLevel: Logger.Level = .info

    @Option(
        name: .long,
        help: """
            Log lines on stderr as logfmt or json (default: log_format in the configuration, else logfmt)\
            ; not used when stderr is the journal.
            """
    )
    var logFormat: LogFormat?

    var configPath: String {
        config ?? ProcessInfo.processInfo.environment["PINKEEPER_CONFIG"] ?? ConfigLoader.defaultPath
    }

    /// Loads the configuration or exits with EX_CONFIG (78) after one line naming the problem.
    /// `watchByDefault`: `run --watch-configuration` (`ConfigLoader.load`).
    func loadConfiguration(watchByDefault: Bool = false) throws -> Configuration {
        do {
            return try ConfigLoader.load(path: configPath, watchByDefault: watchByDefault)
        } catch {
            StandardError.write("pinkeeper: \(error)\n")
            throw ExitCode(78)
        }
    }

    /// Creates and checks the cache and state directories, or exits with `status` after one
    /// line naming the directory and the problem; with EX_CONFIG (78) for a listed private
    /// volume that is none, which no restart fixes.
    func prepareDirectories(_ configuration: Configuration, failureStatus status: Int32) throws {
        do {
            try DataDirectories.prepare(configuration)
        } catch {
            StandardError.write("pinkeeper: \(error)\n")
            throw ExitCode(error.isConfigurationError ? 78 : status)
        }
    }

    /// Started as root: works as the service user from here on, before anything is fetched,
    /// written or run (`ServiceUser`), or exits with `status` after one line saying what to do.
    /// A dry run writes nothing, so it hands no directory over.
    func workAsServiceUser(_ configuration: Configuration, handingOver: Bool = true, failureStatus status: Int32) throws {
        do {
            try ServiceUser.workAsServiceUser(configuration, configPath: configPath, handingOver: handingOver)
        } catch {
            StandardError.write("pinkeeper: \(error)\n")
            throw ExitCode(status)
        }
    }

    /// The logger of a command, set up once per process: native journal entries when stderr is
    /// the journal; otherwise lines in `--log-format`, else the configuration's `log_format`.
    func makeLogger(_ configuration: Configuration) -> Logger {
        let level = logLevel
        if JournalLogHandler.stderrIsJournal() {
            LoggingSystem.bootstrap { _ in JournalLogHandler(level: level) }
        } else {
            lineFormat.set(logFormat ?? configuration.logFormat)
            LoggingSystem.bootstrap { _ in LineLogHandler(level: level, format: lineFormat) }
        }
        return Logger(label: "pinkeeper")
    }

    /// What a reload applies to logging: the new `log_format`, unless `--log-format` was given.
    func apply(_ configuration: Configuration) {
        if logFormat == nil { lineFormat.set(configuration.logFormat) }
    }
}

/// The format of this process's log lines; a reload may change it (`GlobalOptions.apply`).
let lineFormat = LogFormatSetting(.logfmt)

// --log-level parses straight into swift-log's levels; neither package can declare this.
// swift-format-ignore: AvoidRetroactiveConformances
extension Logger.Level: @retroactive ExpressibleByArgument {}

extension LogFormat: ExpressibleByArgument {}

func makeUpdater(_ configuration: Configuration, logger: Logger, hooks: ChangeHooks? = nil) -> StoreUpdater {
    var updater = StoreUpdater(
        fetcher: CurlFetcher(userAgent: PinKeeperVersion.userAgent),
        cache: CacheDirectory(path: configuration.cacheDirectory),
        state: StateDirectory(path: configuration.stateDirectory), logger: logger)
    updater.hooks = hooks
    updater.envoy = configuration.envoySDSDirectory.map {
        EnvoySecretSync(writer: EnvoySecretWriter(directory: $0, logger: logger), cacheDirectory: configuration.cacheDirectory)
    }
    return updater
}
