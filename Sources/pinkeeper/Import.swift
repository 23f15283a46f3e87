import ArgumentParser
import FoundationEssentials
import PinKeeperDaemon
import PinKeeper

struct Import: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Verify a static list from a file and publish it as an update would (for hosts without access to the list's server).",
        discussion: """
            The file is a static list as its server serves it ({"fingerprints": [...]}, every entry signed). \
            Each new entry must verify under the store's configured public keys, expired entries are skipped, \
            one bad entry rejects the whole file, and the merged pins are published atomically and recorded \
            as a successful update. A rejected file changes nothing. Waits for the store's lock like update. \
            Exit status: 0 published; 1 the file was rejected or unreadable, the store busy, or the cache or \
            state directory cannot be created or written; 64 unknown store, or a challenge-mode store (an \
            offline file cannot prove it is current); 78 bad configuration.
            """)

    @OptionGroup var global: GlobalOptions

    @Option(name: .customLong("store"), help: "The static-mode store to import into.")
    var store: String

    @Argument(help: "The static list file, or - for standard input.")
    var file: String

    func run() async throws {
        let configuration = try global.loadConfiguration()
        guard let config = configuration.store(store) else {
            StandardError.write("pinkeeper: no store '\(store)' in \(global.configPath)\n")
            throw ExitCode(64)
        }
        guard config.mode == .static else {
            StandardError.write(
                """
                pinkeeper: store '\(store)' is in challenge mode and cannot import a file: only its server's signature \
                over a fresh challenge shows a list is current (import works for mode = "static" stores)

                """)
            throw ExitCode(64)
        }
        let body: Data
        do {
            body = try OfflineList.read(file, limit: config.policy.maxResponseSize)
        } catch {
            StandardError.write("pinkeeper: store '\(store)': \(error); nothing was imported\n")
            throw ExitCode(1)
        }
        // The file is read first, as root may read it; nothing is written before the switch.
        try global.workAsServiceUser(configuration, failureStatus: 1)
        try global.prepareDirectories(configuration, failureStatus: 1)
        let logger = global.makeLogger(configuration)
        // An import that changes the pins runs on_change like an update.
        let hooks = ChangeHooks(logger: logger, configurationFiles: configuration.sources)
        let report = await makeUpdater(configuration, logger: logger, hooks: hooks).importList(config, path: file, body: body)
        let line = OneShotUpdate.Line(report)
        print(line.text())
        await hooks.finish()
        if line.failed { throw ExitCode(1) }
    }
}
