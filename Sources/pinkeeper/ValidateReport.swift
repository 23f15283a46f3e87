import Glibc
import PinKeeper
import PinKeeperDaemon

/// What `pinkeeper validate` prints: the verdict alone on the first line of standard output
/// (`trusted`, `untrusted: …`, `empty: …`, which programs match), then the details gathered on
/// the way (the connection, each certificate); problems as one line on standard error.
final class ValidateReport {
    let store: String
    /// `--name` as given, and H, its one form.
    let givenName: String
    let host: String
    private var details: [String] = []

    init(store: String, givenName: String, host: String) {
        self.store = store
        self.givenName = givenName
        self.host = host
    }

    func detail(_ line: String) { details.append(line) }

    /// One line per certificate: what an operator needs to write a list entry for it. Positions
    /// are depths only in a verified chain; an unverified one is numbered as `position`.
    func chain(_ chain: [Certificate], verified: Bool = true) {
        for (index, certificate) in chain.enumerated() {
            var line = "\(verified ? "depth" : "position") \(index): \(Self.describe(certificate))"
            if let notAfter = certificate.notAfter { line += "  expires \(notAfter) (\(Timestamp.iso(notAfter)))" }
            detail(line)
        }
        if let leafName = chain.first?.commonName, !PinName.same(leafName, host) {
            detail(
                "note: the leaf's common name '\(LogText.escaped(leafName))' differs from --name '\(LogText.escaped(host))': "
                    + "pins under either are compared, and pinning is skipped only if domainsConfig exempts both")
        }
    }

    static func describe(_ certificate: Certificate) -> String {
        "\(certificate.subject.isEmpty ? "(empty subject)" : LogText.escaped(certificate.subject))  sha256 \(certificate.fingerprintBase64)"
    }

    /// Prints the verdict, then the details, and exits 0, 1 or 2.
    func finish(_ verdict: Verdict, names: PeerNames, reader: CacheReader) -> Never {
        let described = LogText.escaped(names.described)
        switch verdict {
        case .trusted:
            answer("trusted", status: 0)
        case .untrusted where !reader.admits(names):
            answer("untrusted: \(described) is not among the expected_common_names of store '\(store)'", status: 1)
        case .untrusted:
            answer("untrusted: store '\(store)' pins \(described), but not this certificate", status: 1)
        case .empty:
            answer(
                "empty: store '\(store)' has no valid pin for \(described); reject, and run `pinkeeper update --store \(store)`",
                status: 2)
        }
    }

    /// The first line, the details after it, and the exit status.
    func answer(_ line: String, status: Int32) -> Never {
        if host != givenName && !host.isEmpty {
            detail("note: --name '\(LogText.escaped(givenName))' is the host '\(host)' in its one spelling, which decided")
        }
        print(line)
        for detail in details { print(detail) }
        Glibc.exit(status)
    }

    /// `--name` has no one spelling: nothing is looked up (an unlisted-name rule must never
    /// decide for another spelling of a listed host).
    static func refuseSpelling(_ name: String) -> Never {
        print(
            "untrusted: --name '\(LogText.escaped(name))' is a host spelling that is refused and never looked up; pass the host "
                + "in its one form: an IPv4 address as four decimal parts without leading zeros, an IPv6 address without "
                + "zone id or port, or a DNS name without empty labels (docs/protocol.md, H in one spelling)")
        Glibc.exit(1)
    }

    /// A cache or fallback file the store cannot use: its code, the store, the file and why.
    static func unusable(_ error: CacheReaderError, store: String) -> Never {
        fail(error.kind == .invalid ? 65 : 74, "\(error.code.name): store '\(store)': \(error)")
    }

    static func usage(_ message: String) -> Never { fail(64, "usage: \(message)") }

    static func fail(_ status: Int32, _ message: String) -> Never {
        StandardError.write("pinkeeper: \(message)\n")
        Glibc.exit(status)
    }
}
