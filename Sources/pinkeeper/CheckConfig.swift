import ArgumentParser
import PinKeeperDaemon
import PinKeeper

struct CheckConfig: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check-config",
        abstract: "Parse and validate the configuration, then print a summary of the stores.",
        discussion: "Exit status: 0 valid, 78 invalid.")

    @OptionGroup var global: GlobalOptions

    func run() throws {
        let configuration = try global.loadConfiguration()
        print("configuration OK: \(configuration.sources.joined(separator: ", "))")
        print("cache directory: \(configuration.cacheDirectory)")
        print("state directory: \(configuration.stateDirectory)")
        print("concurrency: \(configuration.concurrency) stores fetched at once")
        print("log format: \(configuration.logFormat.rawValue) (when stderr is not the journal)")
        print("watch configuration: \(configuration.watchConfiguration ? "yes, run reloads when these files change" : "no")")
        for store in configuration.stores {
            let keys = store.publicKeys.count == 1 ? "1 key" : "\(store.publicKeys.count) keys"
            // Only the redacted form: check-config output ends up in tickets and chat.
            let proxy = store.policy.proxy == .environment ? "" : ", proxy \(store.policy.proxy.redacted)"
            let authoritative = store.policy.authoritative ? ", authoritative" : ""
            print(
                "store \(store.id): \(store.mode.rawValue) \(store.url) (\(keys)"
                    + ", every \(store.policy.periodicUpdateInterval)s\(proxy)\(authoritative))"
            )
            for target in store.probe.targets {
                print("  probe \(target.id)\(target.connectTo.map { " via \($0)" } ?? "") every \(store.probe.interval)s")
            }
        }
        if configuration.stores.isEmpty { print("no stores configured (add [stores.ID] tables or files in stores.d/)") }
    }
}
