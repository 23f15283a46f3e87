import ArgumentParser
import Foundation
import PinKeeperDaemon

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
        for store in configuration.stores {
            let keys = store.publicKeys.count == 1 ? "1 key" : "\(store.publicKeys.count) keys"
            print("store \(store.id): \(store.mode.rawValue) \(store.url) (\(keys), every \(store.policy.periodicUpdateInterval)s)")
            for target in store.probe.targets {
                print("  probe \(target.id)\(target.connectTo.map { " via \($0)" } ?? "") every \(store.probe.interval)s")
            }
        }
        if configuration.stores.isEmpty { print("no stores configured (add [stores.ID] tables or files in stores.d/)") }
    }
}
