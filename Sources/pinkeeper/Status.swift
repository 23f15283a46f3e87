import ArgumentParser
import FoundationEssentials
import PinKeeperDaemon

enum StatusFormat: String, CaseIterable, ExpressibleByArgument {
    case table, json, prometheus
}

struct Status: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show each store's health, pins, expiry and update times (no running daemon needed).",
        discussion: """
            Reads the cache and state directories named by the configuration. Health: fresh (last \
            attempt succeeded), failing (last attempt failed, valid pins remain), stale (valid pins \
            remain but the last success is older than twice the periodic update interval), unknown \
            (valid pins remain but the state file cannot be read: run as root or the service user), \
            empty (no valid pin). Fallback pins count as valid pins.

            Exit status: 0 all fresh; 1 some failing, stale or unknown, every store still has valid \
            pins; 2 any store empty; 64 usage error or unknown store; 78 invalid configuration.
            """)

    @OptionGroup var global: GlobalOptions

    @Flag(help: "Print JSON (same as --format json).")
    var json = false

    @Option(help: "Output format: table, json or prometheus (text exposition format).")
    var format: StatusFormat?

    @Option(name: .customLong("store"), help: "Show only this store (repeatable).")
    var stores: [String] = []

    func validate() throws {
        if json, let format, format != .json {
            throw ValidationError("--json and --format \(format.rawValue) contradict each other")
        }
    }

    func run() throws {
        let configuration = try global.loadConfiguration()
        for id in stores where configuration.store(id) == nil {
            StandardError.write("pinkeeper: no store '\(id)' in \(global.configPath)\n")
            throw ExitCode(64)
        }
        let report = StatusReport.collect(
            configuration: configuration, storeIDs: stores,
            now: Int64(Date().timeIntervalSince1970))
        switch format ?? (json ? .json : .table) {
        case .table: print(report.table(), terminator: "")
        case .json: print(report.json(), terminator: "")
        case .prometheus: print(report.prometheus(), terminator: "")
        }
        if report.exitCode != 0 { throw ExitCode(report.exitCode) }
    }
}
