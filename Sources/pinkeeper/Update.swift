import ArgumentParser
import PinKeeperDaemon

struct Update: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "update",
        abstract: "Run one update pass now, print one line per store, and exit.",
        discussion: """
            Exit status: 0 every selected store ok or fresh; 1 any store failed or busy (another pinkeeper \
            process was updating it), or the cache or state directory cannot be created or written; \
            64 unknown store; 78 bad configuration. With --dry-run every selected store is fetched, verified \
            and merged, due or not, and its line also says what would change; nothing is written, not even \
            the state.
            """)

    @OptionGroup var global: GlobalOptions

    @Option(name: .customLong("store"), help: "Update only this store (repeatable).")
    var stores: [String] = []

    @Flag(help: "Fetch even stores whose next update is not yet due.")
    var force = false

    @Flag(help: "Fetch, verify and merge, print what would change, and publish or record nothing.")
    var dryRun = false

    func run() async throws {
        let configuration = try global.loadConfiguration()
        for id in stores where configuration.store(id) == nil {
            StandardError.write("pinkeeper: no store '\(id)' in \(global.configPath)\n")
            throw ExitCode(64)
        }
        try global.workAsServiceUser(configuration, handingOver: !dryRun, failureStatus: 1)
        if dryRun { return try await preview(configuration) }
        try global.prepareDirectories(configuration, failureStatus: 1)
        let logger = global.makeLogger(configuration)
        let hooks = ChangeHooks(logger: logger, configurationFiles: configuration.sources)
        let lines = await OneShotUpdate.run(
            configuration: configuration, storeIDs: stores, force: force,
            updater: makeUpdater(configuration, logger: logger, hooks: hooks))
        for line in lines { print(line.text()) }
        await hooks.finish()  // a hook's result is logged, never part of the exit status
        if lines.contains(where: \.failed) { throw ExitCode(1) }
    }

    /// No directory is created and no lock taken: a dry run leaves the disk exactly as it was.
    private func preview(_ configuration: Configuration) async throws {
        let previews = await OneShotUpdate.dryRun(
            configuration: configuration, storeIDs: stores,
            updater: makeUpdater(configuration, logger: global.makeLogger(configuration)))
        for preview in previews { print(preview.line) }
        if previews.contains(where: { $0.result != .ok }) { throw ExitCode(1) }
    }
}
