import ArgumentParser
import Foundation
import PinKeeperDaemon

struct Run: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run the daemon in the foreground until SIGTERM or SIGINT (systemd runs it this way).")

    @OptionGroup var global: GlobalOptions

    func run() async throws {
        let configuration = try global.loadConfiguration()
        let logger = global.makeLogger()
        let (triggers, input) = AsyncStream.makeStream(of: Trigger.self)
        let watcher = SignalWatcher { signal in
            switch signal {
            case SIGHUP: input.yield(.reload)
            case SIGUSR1: input.yield(.updateAll)
            default: input.yield(.terminate)
            }
        }
        let path = global.configPath
        let daemon = Daemon(
            configuration: configuration,
            reload: { Result { () throws(ConfigError) in try ConfigLoader.load(path: path) } },
            makeUpdater: { makeUpdater($0, logger: logger) },
            notifier: SystemdNotifier(), logger: logger)
        await daemon.run(triggers: triggers)
        withExtendedLifetime(watcher) {}
    }
}
