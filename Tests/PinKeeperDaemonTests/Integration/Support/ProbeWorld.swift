import Foundation
import Glibc
import PinKeeper
import TestSupport

/// A store `api` whose probe target is `api.example.test`: a loopback TLS server (the fixture
/// server) presenting leaf ← intermediate from a throw-away PKI (root ← intermediate ← leaf, each
/// valid for one day), reached under its real name through `probe_connect_to`.
final class ProbeWorld: @unchecked Sendable {  // immutable after init; files are the shared state
    static let name = "api.example.test"
    let world: ReaderWorld
    let pki: TestPKI
    let server: FixtureServer

    /// `leafCommonName`: the CN the leaf carries instead of its host name.
    init(_ label: String, leafCommonName: String? = nil) throws {
        world = try ReaderWorld()
        pki = TestPKI("probe-\(label)")
        pki.ca("root")
        pki.ca("intermediate", issuer: "root")
        pki.leaf("leaf", issuer: "intermediate", host: Self.name, commonName: leafCommonName)
        pki.bundle("served", ["leaf", "intermediate"])
        server = try FixtureServer(certificateFile: pki.pem("served"), keyFile: pki.key("served"))
    }

    func digest(_ part: String) -> [UInt8] { OpenSSL.digest(pem: pki.pem(part)) }
    func fingerprint(_ part: String) -> String { OpenSSL.fingerprint(pem: pki.pem(part)) }

    /// `notAfter` of a PKI certificate, in Unix seconds, as the openssl CLI reads it.
    func notAfter(_ part: String) -> Int64 {
        let text = OpenSSL.shell(#"date -d "$(openssl x509 -noout -enddate -in "$1" | cut -d= -f2)" +%s"#, arguments: [pki.pem(part)])
        return Int64(text) ?? 0
    }

    /// Which CA certificates the probe trusts.
    enum Trust {
        /// `probe_ca_file` = the PKI's root.
        case root
        /// No `probe_ca_file`: the system trust store (which honours `SSL_CERT_FILE`).
        case system
        case file(String)
    }

    /// The probe keys of store `api`: the target reached on the loopback server (or `port`),
    /// `expiration_update_threshold` of one hour (the certificates live a day).
    func probeKeys(
        target: String = ProbeWorld.name, port: Int? = nil, trust: Trust = .root, timeout: String = "5s",
        extra: String = ""
    ) -> String {
        var lines = [
            "probe = [\"\(target)\"]",
            "probe_connect_to = { \"\(target)\" = \"127.0.0.1:\(port ?? server.port)\" }",
            "expiration_update_threshold = \"1h\"", "request_timeout = \"\(timeout)\"",
        ]
        switch trust {
        case .root: lines.append("probe_ca_file = \"\(pki.pem("root"))\"")
        case .system: break
        case .file(let path): lines.append("probe_ca_file = \"\(path)\"")
        }
        return (lines + [extra]).joined(separator: "\n")
    }

    /// Store `api` with probe keys; its list URL refuses connections unless `url` is given.
    func configure(
        _ probeKeys: String, url: String = "https://127.0.0.1:1/list", topLevel: String = "",
        others: [ReaderWorld.Store] = []
    ) throws {
        try world.configure([.init(id: "api", extra: probeKeys, url: url)] + others, topLevel: topLevel)
    }

    func publish(_ pins: [Pin], domainsConfig: DomainsConfig? = nil) throws {
        try world.publish("api", pins, domainsConfig: domainsConfig)
    }

    func pin(_ part: String, depth: Int = 0, expires: Int64 = ReaderWorld.future) -> Pin {
        Pin(name: Self.name, fingerprint: digest(part), expires: expires, depth: depth)
    }

    func probe(_ arguments: [String] = [], environment: [String: String] = [:], timeout: TimeInterval = 30) -> ChildProcess.Result {
        world.run("probe", arguments, environment: environment, timeout: timeout)
    }
}

/// A TCP socket on 127.0.0.1 that listens but never accepts: connections complete (the kernel's
/// backlog) and then hear nothing, like a hung server.
final class SilentListener {
    let fd: Int32
    let port: Int

    init() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard bound, listen(fd, 8) == 0 else {
            Glibc.close(fd)
            throw FixtureError("cannot listen on 127.0.0.1")
        }
        self.fd = fd
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    private var isOpen = true

    /// Closes it now (a port then refuses connections); otherwise it closes when released.
    func close() {
        if isOpen { _ = Glibc.close(fd) }
        isOpen = false
    }

    deinit { close() }
}
