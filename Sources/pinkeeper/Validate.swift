import ArgumentParser
import FoundationEssentials
import Glibc
import PinKeeper
import PinKeeperDaemon

struct Validate: ParsableCommand {
    static let configuration = CommandConfiguration(
        // Every subcommand names itself: otherwise ArgumentParser derives each name from the type
        // name at run time (`String(describing:)`, runtime conformance lookups) on every start.
        commandName: "validate",
        abstract: "Answer trusted, untrusted or empty for a host's certificate, from the published cache.",
        discussion: """
            Wultra semantics (docs/protocol.md) against the store's cache file plus its fallback pins. \
            Configured (without --cache-directory): the store of the configuration, its cache file \
            as reconciled with the configuration's keys (pins of a removed key never count). As a \
            reader (--cache-directory): no configuration is read; DIR/STORE.json is read exactly as \
            every reader library reads it, with --fallback-file and --expected-common-name standing \
            for the store's settings (an empty --expected-common-name given alone admits no name). \
            The host (--name) decides, in its one spelling (IP literals in canonical text, DNS \
            names lower-case ASCII without the trailing dot, Punycode for other letters); a spelling \
            without one form is untrusted. With a chain, the leaf's common name is consulted too, \
            but pinning is skipped only if domainsConfig exempts both names, and pins under either \
            may match. --connect first verifies the chain and the host (an IP literal against the \
            certificate's addresses, without SNI; a DNS name as SNI and host name) with OpenSSL \
            (against the store's ca_file alone when it has one, else OpenSSL's default trust, which \
            honours SSL_CERT_FILE) and compares the pins with the verified chain only. --certificate \
            takes the file's order as the verified chain and verifies nothing.

            The first line of standard output is the answer: trusted, untrusted: …, or empty: …; \
            details follow. Exit status: 0 trusted; 1 untrusted (or TLS verification failed); 2 \
            empty (no valid pin for the name: reject, and update the store); 64 usage error or \
            unknown store; 65 bad data (certificate or cache file content); 66 certificate file \
            missing or unreadable; 68 host not found; 69 cannot connect or handshake failed; 70 \
            internal OpenSSL failure; 74 cache or fallback file unreadable or writable by others; \
            78 invalid configuration. Errors are one line on standard error, `pinkeeper: WORD: …`, \
            WORD being `usage` or the code of the file refused (invalid-content, missing, …).
            """)

    @OptionGroup var global: GlobalOptions

    @Option(help: "The store whose pins decide.")
    var store: String

    @Option(
        help: ArgumentHelp(
            "The host the client connects to and verifies; with a chain, the leaf's common name is consulted too.",
            valueName: "host"))
    var name: String

    @Option(help: "Base64 (44 characters, padded) or hex (64 digits, colons allowed) SHA-256 of the DER certificate.")
    var fingerprint: String?

    @Option(help: ArgumentHelp("With --fingerprint: the certificate's position in the verified chain (0 = leaf).", valueName: "n"))
    var depth: String?

    @Option(
        help: ArgumentHelp(
            "A PEM or DER certificate file; a chain is allowed, leaf first, standing for the verified chain.",
            valueName: "file"))
    var certificate: String?

    @Option(
        help: ArgumentHelp(
            "Do a TLS handshake with HOST (port 443 unless given) and verify it for --name.",
            valueName: "host[:port]"))
    var connect: String?

    @Option(help: "With --connect: seconds allowed for connecting and the handshake.")
    var timeout: Int = 10

    @Option(help: ArgumentHelp("Read DIR/STORE.json as a reader library does, without a configuration.", valueName: "dir"))
    var cacheDirectory: String?

    @Option(help: ArgumentHelp("With --cache-directory: the store's fallback file.", valueName: "file"))
    var fallbackFile: String?

    @Option(
        name: .customLong("expected-common-name"),
        help: ArgumentHelp("With --cache-directory: a name the store admits (repeat for more).", valueName: "name"))
    var expectedCommonNames: [String] = []

    func validate() throws {
        guard !name.isEmpty else { throw ValidationError("--name must be the host a client connects to, not empty") }
        let inputs = [fingerprint != nil, certificate != nil, connect != nil].filter { $0 }.count
        guard inputs == 1 else { throw ValidationError("give exactly one of --fingerprint, --certificate or --connect") }
        if let depth {
            guard fingerprint != nil else { throw ValidationError("--depth goes with --fingerprint (a chain's depths are its positions)") }
            guard ValidateArguments.depth(depth) != nil else {
                throw ValidationError("--depth must be one to nine ASCII digits (0 = leaf), not '\(LogText.escaped(depth))'")
            }
        }
        if let fingerprint, ValidateArguments.digest(fingerprint) == nil {
            throw ValidationError(
                "--fingerprint must be a SHA-256 digest as 44 characters of padded standard base64 or 64 hex digits "
                    + "(colons between pairs allowed), not '\(LogText.escaped(fingerprint))'")
        }
        if let connect, Endpoint.parse(connect) == nil {
            throw ValidationError("--connect must be HOST, HOST:PORT or [IPv6]:PORT, not '\(LogText.escaped(connect))'")
        }
        guard timeout > 0 else { throw ValidationError("--timeout must be at least 1 second") }
        if cacheDirectory == nil && (fallbackFile != nil || !expectedCommonNames.isEmpty) {
            throw ValidationError(
                "--fallback-file and --expected-common-name go with --cache-directory; without it the configuration sets them")
        }
    }

    func run() throws {
        let (reader, caFile) = try openReader()
        guard let host = HostName.canonical(name) else { ValidateReport.refuseSpelling(name) }
        let report = ValidateReport(store: store, givenName: name, host: host)
        var names = PeerNames(host: host)
        let verdict: Verdict
        if let fingerprint, let digest = ValidateArguments.digest(fingerprint) {
            verdict = reader.verdict(host: host, fingerprint: digest, depth: depth.flatMap(ValidateArguments.depth) ?? 0)
        } else if let certificate {
            // The file stands for a verified chain: nothing here builds or checks the path.
            let chain = ValidateCertificates.readChain(certificate)
            report.chain(chain)
            names.commonName = chain.first?.commonName
            verdict = reader.verdict(host: host, verifiedChain: chain)
        } else if let connect, let endpoint = Endpoint.parse(connect) {
            let connection = ValidateConnection(report: report, store: store, timeout: timeout)
            let chain = connection.verifiedChain(endpoint, caFile: caFile)
            names.commonName = chain.first?.commonName
            verdict = reader.verdict(host: host, verifiedChain: chain)
        } else {
            ValidateReport.usage("give exactly one of --fingerprint, --certificate or --connect")
        }
        report.finish(verdict, names: names, reader: reader)
    }

    /// The store's reader and CA file: read as any reader reads it with --cache-directory, else
    /// as the configuration says (its keys reconciled). Exits when the store cannot be used.
    private func openReader() throws -> (CacheReader, caFile: String?) {
        do {
            if let cacheDirectory {
                // An empty name given alone is a list that admits no name; given with others, no name.
                let expected = expectedCommonNames.isEmpty ? nil : expectedCommonNames.filter { !$0.isEmpty }
                let reader = try CacheReader(
                    store: store, cacheDirectory: cacheDirectory, fallbackFile: fallbackFile, expectedCommonNames: expected)
                return (reader, nil)
            }
            let configuration = try global.loadConfiguration()
            guard let storeConfig = configuration.store(store) else {
                ValidateReport.usage("no store '\(store)' in \(global.configPath)")
            }
            return (try storeConfig.pinReader(cacheDirectory: configuration.cacheDirectory), storeConfig.caFile)
        } catch let error as CacheReaderError {
            ValidateReport.unusable(error, store: store)
        }
    }
}
