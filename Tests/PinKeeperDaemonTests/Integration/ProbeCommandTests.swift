import Foundation
import PinKeeper
import PinKeeperDaemon
import TestSupport
import Testing

/// `pinkeeper probe`: real TLS handshakes with loopback servers reached under a real name
/// through `probe_connect_to`, one outcome per test.
@Suite("pinkeeper probe: the served certificate against the pins")
struct ProbeCommandTests {
    /// The line for the target, and that it is the only output.
    private func line(_ result: ChildProcess.Result, sourceLocation: SourceLocation = #_sourceLocation) -> String {
        let lines = result.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 1, "\(result.stdout)\(result.stderr)", sourceLocation: sourceLocation)
        return lines.first ?? ""
    }

    @Test("the leaf pinned at depth 0: pinned (0), with the peer, the leaf's fingerprint and expiry; no request sent")
    func pinnedLeaf() throws {
        let probe = try ProbeWorld("leaf")
        try probe.configure(probe.probeKeys())
        try probe.publish([probe.pin("leaf")])
        let result = probe.probe()
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        let text = line(result)
        #expect(
            text.hasPrefix(
                "api api.example.test:443 pinned peer=127.0.0.1:\(probe.server.port) leaf=\(probe.fingerprint("leaf")) "
                    + "leaf_expires=\(Timestamp.iso(probe.notAfter("leaf")))"), "\(text)")
        #expect(text.contains("reason=\"the served certificate is pinned until"))
        // A handshake only: the server never saw an HTTP request.
        #expect(probe.server.requests().isEmpty)
    }

    @Test("the intermediate pinned at depth 1: pinned (0)")
    func pinnedIntermediate() throws {
        let probe = try ProbeWorld("depth1")
        try probe.configure(probe.probeKeys())
        try probe.publish([probe.pin("intermediate", depth: 1)])
        let result = probe.probe()
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        #expect(line(result).contains(" pinned "))
        #expect(line(result).contains("the certificate at depth 1 of the served chain is pinned"))
    }

    @Test("a served chain no pin matches: unpinned (1), naming the leaf to pin")
    func unpinned() throws {
        let probe = try ProbeWorld("unpinned")
        try probe.configure(probe.probeKeys())
        // The intermediate pinned as if it were the leaf (depth 0): wrong depth, no match.
        try probe.publish([
            Pin(name: ProbeWorld.name, fingerprint: [UInt8](repeating: 9, count: 32), expires: ReaderWorld.future),
            probe.pin("intermediate", depth: 0),
        ])
        let result = probe.probe()
        #expect(result.status == 1, "\(result.stdout)\(result.stderr)")
        let text = line(result)
        #expect(text.hasPrefix("api api.example.test:443 unpinned "))
        #expect(text.contains("leaf=\(probe.fingerprint("leaf"))"))
        #expect(text.contains("matches none of the 2 valid pins for 'api.example.test'"))
    }

    @Test("pinned, but the only pin for the served leaf expires within the threshold: expiring (1)")
    func expiring() throws {
        let probe = try ProbeWorld("expiring")
        try probe.configure(probe.probeKeys())
        try probe.publish([probe.pin("leaf", expires: ReaderWorld.now + 1_800)])
        let result = probe.probe()
        #expect(result.status == 1, "\(result.stdout)\(result.stderr)")
        #expect(line(result).hasPrefix("api api.example.test:443 expiring "))
        #expect(line(result).contains("the only pins for the served certificate expire"))
    }

    @Test("handshake failures are errors (1), never a pin verdict: untrusted CA, wrong name, silent server")
    func errors() throws {
        let probe = try ProbeWorld("errors")
        try probe.publish([probe.pin("leaf")])

        // probe_ca_file is the only trust: SSL_CERT_FILE naming the right root changes nothing.
        let otherCA = TestPKI("probe-other-ca")
        otherCA.ca("root")
        try probe.configure(probe.probeKeys(trust: .file(otherCA.pem("root"))))
        let untrusted = probe.probe(environment: ["SSL_CERT_FILE": probe.pki.pem("root")])
        #expect(untrusted.status == 1)
        #expect(line(untrusted).hasPrefix("api api.example.test:443 error "), "\(untrusted.stdout)")
        #expect(line(untrusted).contains("TLS verification for api.example.test failed: unable to get local issuer certificate"))
        // What the server presented is still named, to help whoever investigates.
        #expect(line(untrusted).contains("leaf=\(probe.fingerprint("leaf"))"))

        // The host-name check is on: the same server asked for another name.
        try probe.configure(probe.probeKeys(target: "www.example.test"))
        let mismatch = probe.probe()
        #expect(mismatch.status == 1)
        #expect(line(mismatch).contains(" error "))
        #expect(line(mismatch).contains("hostname mismatch"))

        // A server that accepts and then never answers costs request_timeout, not more.
        let silent = try SilentListener()
        try probe.configure(probe.probeKeys(port: silent.port, timeout: "1s"))
        let started = Date()
        let hung = probe.probe()
        #expect(hung.status == 1)
        #expect(line(hung).contains("timed out after 1s"), "\(hung.stdout)")
        #expect(Date().timeIntervalSince(started) < 5)
    }

    @Test("without probe_ca_file the system trust store decides (here through SSL_CERT_FILE)")
    func systemTrust() throws {
        let probe = try ProbeWorld("system")
        try probe.configure(probe.probeKeys(trust: .system))
        try probe.publish([probe.pin("leaf")])
        let trusted = probe.probe(environment: ["SSL_CERT_FILE": probe.pki.pem("root")])
        #expect(trusted.status == 0, "\(trusted.stdout)\(trusted.stderr)")
        let untrusted = probe.probe()
        #expect(untrusted.status == 1)
        #expect(line(untrusted).contains(" error "))
    }

    @Test("a connection refused is an error naming the address")
    func refused() throws {
        let probe = try ProbeWorld("refused")
        try probe.publish([probe.pin("leaf")])
        let port: Int
        do {
            let listener = try SilentListener()
            port = listener.port
        }
        try probe.configure(probe.probeKeys(port: port))
        let result = probe.probe()
        #expect(result.status == 1)
        #expect(
            line(result).contains("error reason=\"cannot connect to 127.0.0.1 port \(port): 127.0.0.1:\(port): Connection refused\""),
            "\(result.stdout)")
    }

    @Test("a certificate list over 64 KiB is refused before it is parsed: error (1)")
    func oversizedChain() throws {
        let probe = try ProbeWorld("oversize")
        // A leaf with 2800 DNS names (about 80 KiB: over our bound, under OpenSSL's default of 100 KiB).
        let dir = probe.pki.directory.path
        OpenSSL.shell(
            #"""
            cd "$1"
            { printf 'basicConstraints=critical,CA:FALSE\nextendedKeyUsage=serverAuth\nsubjectAltName=DNS:api.example.test'
              for i in $(seq 1 2800); do printf ',DNS:h%05d.padding.example.test' "$i"; done; printf '\n'; } >big.ext
            openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out big.key 2>/dev/null
            openssl req -new -key big.key -subj /CN=api.example.test -out big.csr 2>/dev/null
            openssl x509 -req -in big.csr -CA intermediate.pem -CAkey intermediate.key -set_serial 7 -days 1 -sha256 \
                -extfile big.ext -out big.pem 2>/dev/null
            cat big.pem intermediate.pem >big-served.pem
            """#, arguments: [dir])
        let big = try FixtureServer(certificateFile: "\(dir)/big-served.pem", keyFile: "\(dir)/big.key")
        try probe.configure(probe.probeKeys(port: big.port))
        try probe.publish([Pin(name: ProbeWorld.name, fingerprint: OpenSSL.digest(pem: "\(dir)/big.pem"), expires: ReaderWorld.future)])
        let result = probe.probe()
        #expect(result.status == 1)
        #expect(line(result).contains(" error "))
        #expect(line(result).contains("excessive message size"), "\(result.stdout)")
    }

    @Test("--store selects; an unknown store or a store without probe targets is a usage error (64)")
    func selection() throws {
        let probe = try ProbeWorld("selection")
        try probe.configure(probe.probeKeys(), others: [.init(id: "quiet")])
        try probe.publish([probe.pin("leaf")])
        let one = probe.probe(["--store", "api"])
        #expect(one.status == 0, "\(one.stdout)\(one.stderr)")
        let unknown = probe.probe(["--store", "nope"])
        #expect(unknown.status == 64)
        #expect(unknown.stderr.contains("no store 'nope'"))
        let none = probe.probe(["--store", "quiet"])
        #expect(none.status == 64)
        #expect(none.stderr.contains("no probe targets"))
    }

    @Test("check-config lists each probe target under its store")
    func checkConfig() throws {
        let probe = try ProbeWorld("check-config")
        try probe.configure(probe.probeKeys(extra: "probe_interval = \"15m\""))
        let result = probe.world.run("check-config", [])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(
            result.stdout.contains(
                "store api: challenge https://127.0.0.1:1/list (1 key, every 604800s)\n"
                    + "  probe api.example.test:443 via 127.0.0.1:\(probe.server.port) every 900s\n"), "\(result.stdout)")
    }
}
