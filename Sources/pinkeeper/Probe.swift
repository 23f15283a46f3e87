import ArgumentParser
import PinKeeperDaemon

struct Probe: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "probe",
        abstract: "Probe every configured host once: is the certificate it serves pinned?",
        discussion: """
            For each target in a store's probe list: a TLS handshake (SNI and host-name check for \
            the target's name; the store's probe_ca_file alone when set, else the system trust \
            store, which honours SSL_CERT_FILE), then the store's published and fallback pins asked \
            about the verified chain, as a reader would. One line per target: store, target, \
            outcome (pinned, unpinned, expiring, error), then details. No application data is \
            sent. Results are not recorded: `pinkeeper status` shows the daemon's own probes.

            Exit status: 0 every target pinned; 1 any target unpinned, expiring or in error; 64 \
            usage error, unknown store or no probe target; 78 invalid configuration.
            """)

    @OptionGroup var global: GlobalOptions

    @Option(name: .customLong("store"), help: "Probe only this store's targets (repeatable).")
    var stores: [String] = []

    func run() async throws {
        let configuration = try global.loadConfiguration()
        for id in stores where configuration.store(id) == nil {
            StandardError.write("pinkeeper: no store '\(id)' in \(global.configPath)\n")
            throw ExitCode(64)
        }
        let selected = (stores.isEmpty ? configuration.stores : stores.compactMap(configuration.store))
            .filter { !$0.probe.targets.isEmpty }
        guard !selected.isEmpty else {
            StandardError.write(
                "pinkeeper: no probe targets in \(global.configPath)"
                    + "; list hosts with probe = [\"api.example.com\"] in a store or in [defaults]\n"
            )
            throw ExitCode(64)
        }
        let results = await ProbePass.run(selected, prober: Prober(cacheDirectory: configuration.cacheDirectory))
        for result in results {
            let record = result.record
            var text = "\(result.store) \(record.target) \(record.outcome.rawValue)"
            if let peer = record.peer { text += " peer=\(peer)" }
            if let fingerprint = record.leafFingerprint { text += " leaf=\(fingerprint)" }
            if let expires = record.leafExpires { text += " leaf_expires=\(Timestamp.iso(expires))" }
            text += " reason=\"\(record.reason)\""
            print(text)
        }
        if results.contains(where: { $0.record.outcome != .pinned }) { throw ExitCode(1) }
    }
}
