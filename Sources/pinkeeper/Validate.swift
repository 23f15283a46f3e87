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
            Wultra semantics (PROTOCOL.md §5) against the store's cache file plus its fallback pins, \
            as reconciled with the configuration's keys (pins of a removed key never count). The \
            host (--name) decides (§5.1): with a chain, the leaf's common name is consulted too, \
            but pinning is skipped only if domainsConfig exempts both names, and pins under either \
            may match. Names compare by Unicode scalars, ASCII letters case-insensitively; expired \
            pins never count; with a chain, each pin is compared with the certificate at its \
            depth. --connect first verifies the chain and the \
            host name with OpenSSL (against the store's ca_file alone when it has one, else \
            OpenSSL's default trust, which honours SSL_CERT_FILE), then prints the verified chain \
            (leaf first, up to the trusted root) with SHA-256 fingerprints and compares the pins \
            with it; certificates the server sent outside that chain are listed and ignored. \
            --certificate takes the file's order as the verified chain and verifies nothing.

            Exit status: 0 trusted; 1 untrusted (or TLS verification failed); 2 empty (no valid pin \
            for the name: reject, and update the store); 64 usage error or unknown store; 65 bad \
            data (certificate or cache file content); 66 certificate file missing or unreadable; \
            68 host not found; 69 cannot connect or handshake failed; 70 internal OpenSSL failure; \
            74 cache file unreadable; 78 invalid configuration (including an unusable ca_file).
            """)

    @OptionGroup var global: GlobalOptions

    @Option(help: "The store whose pins decide.")
    var store: String

    @Option(
        help: ArgumentHelp(
            "The host the client connects to and verifies; with a chain, the leaf's common name is consulted too.",
            valueName: "host"))
    var name: String

    @Option(help: "Base64 (or hex) SHA-256 of the DER certificate.")
    var fingerprint: String?

    @Option(help: "With --fingerprint: the certificate's position in the verified chain (0 = leaf).")
    var depth: Int?

    @Option(
        help: ArgumentHelp(
            "A PEM or DER certificate file; a chain is allowed, leaf first, standing for the verified chain.",
            valueName: "file"))
    var certificate: String?

    @Option(
        help: ArgumentHelp(
            "Do a TLS handshake with HOST (port 443 unless given) using --name as SNI.",
            valueName: "host[:port]"))
    var connect: String?

    @Option(help: "With --connect: seconds allowed for connecting and the handshake.")
    var timeout: Int = 10

    func validate() throws {
        guard !name.isEmpty else { throw ValidationError("--name must be the host a client connects to, not empty") }
        let inputs = [fingerprint != nil, certificate != nil, connect != nil].filter { $0 }.count
        guard inputs == 1 else { throw ValidationError("give exactly one of --fingerprint, --certificate or --connect") }
        if let depth {
            guard fingerprint != nil else { throw ValidationError("--depth goes with --fingerprint (a chain's depths are its positions)") }
            guard depth >= 0 else { throw ValidationError("--depth must be 0 (leaf) or more") }
        }
        if let fingerprint, Self.digest(fingerprint) == nil {
            throw ValidationError("--fingerprint must be the base64 (or hex) of a 32-byte SHA-256 digest, not '\(fingerprint)'")
        }
        if let connect, Endpoint.parse(connect) == nil {
            throw ValidationError("--connect must be HOST, HOST:PORT or [IPv6]:PORT, not '\(connect)'")
        }
        guard timeout > 0 else { throw ValidationError("--timeout must be at least 1 second") }
    }

    func run() throws {
        let configuration = try global.loadConfiguration()
        guard let storeConfig = configuration.store(store) else {
            fail(64, "no store '\(store)' in \(global.configPath)")
        }
        let reader: CacheReader
        do {
            reader = try storeConfig.pinReader(cacheDirectory: configuration.cacheDirectory)
        } catch {
            fail(error.kind == .invalid ? 65 : 74, "store '\(store)': \(error)")
        }

        let verdict: Verdict
        var names = PeerNames(host: name)
        if let fingerprint, let digest = Self.digest(fingerprint) {
            verdict = reader.verdict(host: name, fingerprint: digest, depth: depth ?? 0)
        } else if let certificate {
            // The file stands for a verified chain: nothing here builds or checks the path.
            let chain = readChain(certificate)
            printChain(chain)
            names.commonName = chain.first?.commonName
            verdict = reader.verdict(host: name, verifiedChain: chain)
        } else if let connect, let endpoint = Endpoint.parse(connect) {
            let chain = connectAndCheck(host: endpoint.host, port: endpoint.port, caFile: storeConfig.caFile)
            names.commonName = chain.first?.commonName
            verdict = reader.verdict(host: name, verifiedChain: chain)
        } else {
            fail(64, "give exactly one of --fingerprint, --certificate or --connect")
        }
        report(verdict, names: names, reader: reader)
    }

    // MARK: Inputs

    private func readChain(_ path: String) -> [Certificate] {
        guard let data = FileManager.default.contents(atPath: path) else {
            let reason = FileManager.default.fileExists(atPath: path) ? "cannot be read (check its permissions)" : "does not exist"
            fail(66, "certificate file \(path) \(reason)")
        }
        do {
            return try Certificate.chain(from: Array(data))
        } catch {
            fail(65, "certificate file \(path): \(error)")
        }
    }

    /// The chain OpenSSL verified for --name, leaf first; exits when verification fails.
    private func connectAndCheck(host: String, port: UInt16, caFile: String?) -> [Certificate] {
        let handshake: TLSHandshake
        do {
            handshake = try TLSConnect.handshake(
                host: host, port: port, serverName: name, caFile: caFile,
                timeoutSeconds: timeout)
        } catch {
            switch error.kind {
            case .unknownHost: fail(68, error.description)
            case .unavailable: fail(69, error.description)
            case .caFile: fail(78, "store '\(store)': ca_file: \(error.description)")
            case .setup, .cancelled: fail(70, error.description)
            }
        }
        print("connected to \(handshake.peer) (\(handshake.protocolVersion), \(handshake.cipher)), server name \(name)")
        if let failure = handshake.verificationFailure {
            print("presented by the server (not verified), in the order sent:")
            printChain(parse(handshake.presentedChain, "the server's certificate"), verified: false)
            print("untrusted: TLS verification for '\(name)' failed: \(failure); pins were not consulted")
            Glibc.exit(1)
        }
        // Pins are compared with the path OpenSSL verified, never with what the server sent: a
        // server may append any public certificate, which path building ignores.
        print("chain and host name verified for '\(name)'; the verified chain, leaf first:")
        let verified = parse(handshake.verifiedChain, "the verified chain's certificate")
        printChain(verified)
        for der in handshake.presentedChain where !handshake.verifiedChain.contains(der) {
            guard let extra = try? Certificate(der: der) else { continue }
            print("not in the verified chain, ignored: \(describe(extra))")
        }
        return verified
    }

    private func parse(_ chain: [[UInt8]], _ what: String) -> [Certificate] {
        var certificates: [Certificate] = []
        for (depth, der) in chain.enumerated() {
            do {
                certificates.append(try Certificate(der: der))
            } catch {
                fail(65, "\(what) at depth \(depth) cannot be parsed: \(error)")
            }
        }
        return certificates
    }

    // MARK: Output

    /// One line per certificate: what an operator needs to write a list entry for it. Positions
    /// are depths only in a verified chain; an unverified one is numbered as `position`.
    private func printChain(_ chain: [Certificate], verified: Bool = true) {
        for (index, certificate) in chain.enumerated() {
            var line = "\(verified ? "depth" : "position") \(index): \(describe(certificate))"
            if let notAfter = certificate.notAfter { line += "  expires \(notAfter) (\(Timestamp.iso(notAfter)))" }
            print(line)
        }
        if let leafName = chain.first?.commonName, !PinName.same(leafName, name) {
            print(
                "note: the leaf's common name '\(LogText.escaped(leafName))' differs from --name '\(LogText.escaped(name))': "
                    + "pins under either are compared, and pinning is skipped only if domainsConfig exempts both")
        }
    }

    private func describe(_ certificate: Certificate) -> String {
        "\(certificate.subject.isEmpty ? "(empty subject)" : LogText.escaped(certificate.subject))  sha256 \(certificate.fingerprintBase64)"
    }

    private func report(_ verdict: Verdict, names: PeerNames, reader: CacheReader) -> Never {
        let described = LogText.escaped(names.described)
        switch verdict {
        case .trusted:
            print("trusted")
            Glibc.exit(0)
        case .untrusted:
            if !reader.admits(names) {
                print("untrusted: \(described) is not among the expected_common_names of store '\(store)'")
            } else {
                print("untrusted: store '\(store)' pins \(described), but not this certificate")
            }
            Glibc.exit(1)
        case .empty:
            print("empty: store '\(store)' has no valid pin for \(described); reject, and run `pinkeeper update --store \(store)`")
            Glibc.exit(2)
        }
    }

    private func fail(_ status: Int32, _ message: String) -> Never {
        StandardError.write("pinkeeper: \(message)\n")
        Glibc.exit(status)
    }

    // MARK: Parsing

    /// 32 bytes from standard base64 (padded) or hex (colons allowed, as `openssl x509 -fingerprint` prints).
    static func digest(_ text: String) -> [UInt8]? {
        if let data = Data(base64Encoded: text), data.count == 32 { return Array(data) }
        let hex = text.filter { $0 != ":" }
        guard hex.count == 64 else { return nil }
        var bytes: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            guard let byte = UInt8(hex[index..<next], radix: 16) else { return nil }
            bytes.append(byte)
            index = next
        }
        return bytes
    }
}
