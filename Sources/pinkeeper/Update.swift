import ArgumentParser
import Foundation
import PinKeeperDaemon

struct Update: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run one update pass now, print one line per store, and exit.",
        discussion: """
            Exit status: 0 every selected store ok or fresh; 1 any store failed or busy (another pinkeeper \
            process was updating it), or the cache or state directory cannot be created or written; \
            64 unknown store; 78 bad configuration.
            """)

    @OptionGroup var global: GlobalOptions

    @Option(name: .customLong("store"), help: "Update only this store (repeatable).")
    var stores: [String] = []

    @Flag(help: "Fetch even stores whose next update is not yet due.")
    var force = false

    func run() async throws {
        let configuration = try global.loadConfiguration()
        for id in stores where configuration.store(id) == nil {
            FileHandle.standardError.write(Data("pinkeeper: no store '\(id)' in \(global.configPath)\n".utf8))
            throw ExitCode(64)
        }
        try global.prepareDirectories(configuration, failureStatus: 1)
        let logger = global.makeLogger()
        let hooks = ChangeHooks(logger: logger)
        let lines = await OneShotUpdate.run(configuration: configuration, storeIDs: stores, force: force,
                                            updater: makeUpdater(configuration, logger: logger, hooks: hooks))
        for line in lines {
            var text = "\(line.store) \(line.result) pins=\(line.pins) next=\(Timestamp.iso(line.nextUpdate))"
            if let reason = line.reason { text += " reason=\(LogText.quoted(reason))" }  // server text: one line
            print(text)
        }
        await hooks.finish()  // a hook's result is logged, never part of the exit status
        if lines.contains(where: \.failed) { throw ExitCode(1) }
    }
}
