import Foundation
import Glibc
import PinKeeper
@testable import PinKeeperDaemon
import TestSupport

/// A configuration file with cache and state directories, for running `pinkeeper status` and
/// `pinkeeper validate` as a user would: the binary, a config path, files on disk.
final class ReaderWorld: @unchecked Sendable {  // paths are immutable; files are the shared state, as in production
    let root: URL
    let cache: URL
    let state: URL
    let config: URL

    static let future: Int64 = 4_102_444_800  // 2100-01-01
    static var now: Int64 { Int64(Date().timeIntervalSince1970) }

    init() throws {
        root = TestEnvironment.temporaryDirectory("readers")
        cache = root.appendingPathComponent("cache")
        state = root.appendingPathComponent("state")
        config = root.appendingPathComponent("pinkeeper.toml")
        for dir in [cache, state] {
            try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
            chmod(dir.path, 0o755)
        }
    }

    deinit { try? FileManager.default.removeItem(at: root) }

    /// One `[stores.ID]` table; `extra` is raw TOML lines (expected_common_names, fallback_file, …).
    struct Store {
        var id: String
        var extra: String = ""
        var url: String?
    }

    func configure(_ stores: [Store], topLevel: String = "") throws {
        var text = "cache_directory = \"\(cache.path)\"\nstate_directory = \"\(state.path)\"\n\(Sandbox.userLine)\(topLevel)\n"
        for store in stores {
            text += "\n[stores.\(store.id)]\nurl = \"\(store.url ?? "https://pins.example.com/\(store.id)")\"\n"
            text += "public_key = \"\(TestEnvironment.publicKey(1))\"\n\(store.extra)\n"
        }
        try text.write(to: config, atomically: true, encoding: .utf8)
    }

    /// Publishes a cache file exactly as the daemon encodes it.
    func publish(
        _ store: String, _ pins: [Pin], domainsConfig: DomainsConfig? = nil, updated: Int64 = ReaderWorld.now - 60,
        nextUpdate: Int64 = ReaderWorld.now + 86_400, source: String? = nil, mode: ListMode? = nil
    ) throws {
        let file = CacheFile(
            list: PinList(pins: pins, domainsConfig: domainsConfig),
            metadata: .init(
                store: store, source: source ?? "https://pins.example.com/\(store)", updated: updated,
                nextUpdate: nextUpdate, mode: mode))
        try CacheDirectory(path: cache.path).publish(file)
    }

    func saveState(_ store: String, _ change: (inout StoreState) -> Void) throws {
        var value = StoreState()
        change(&value)
        try StateDirectory(path: state.path).save(value, store: store)
    }

    func file(_ name: String, _ contents: Data) throws -> String {
        let url = root.appendingPathComponent(name)
        try contents.write(to: url)
        return url.path
    }

    /// `pinkeeper SUBCOMMAND --config <this config> ARGS…`.
    func run(
        _ subcommand: String, _ arguments: [String], environment: [String: String] = [:],
        timeout: TimeInterval = 30
    ) -> ChildProcess.Result {
        var env = ProcessInfo.processInfo.environment
        env["SSL_CERT_FILE"] = nil
        env["SSL_CERT_DIR"] = nil
        env.merge(environment) { $1 }
        return ChildProcess.run(
            TestEnvironment.binary, [subcommand, "--config", config.path] + arguments,
            environment: env, timeout: timeout)
    }
}

/// What the `openssl` CLI says about the test certificates, independently of the code under test.
enum OpenSSL {
    /// Base64 SHA-256 of a PEM certificate's DER encoding.
    static func fingerprint(pem path: String) -> String {
        shell("openssl x509 -in '\(path)' -outform DER | openssl dgst -sha256 -binary | openssl base64 -A")
    }

    static func der(pem path: String) -> Data {
        Data(base64Encoded: shell("openssl x509 -in '\(path)' -outform DER | openssl base64 -A")) ?? Data()
    }

    static func digest(pem path: String) -> [UInt8] { Array(Data(base64Encoded: fingerprint(pem: path)) ?? Data()) }

    @discardableResult
    static func shell(_ command: String, arguments: [String] = []) -> String {
        let result = ChildProcess.run("/bin/bash", ["-c", "set -euo pipefail; " + command, "bash"] + arguments, timeout: 60)
        precondition(result.status == 0, "\(command) failed: \(result.stderr)")
        return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// More server certificates signed by the test CA, beside the ones make-ca.sh makes:
    /// `readers/other` (localhost, a different key: never pinned) and `readers/chained`
    /// (server.pem followed by ca.pem, so the handshake presents a chain of two).
    /// Remade whenever they no longer verify against the current test CA.
    static let extraCertificates: Void = {
        let ca = TestEnvironment.certificates.path
        shell(
            #"""
            ca="$1"; out="$ca/readers"; mkdir -p "$out"
            exec 9>"$ca/.readers.lock"; flock 9
            if [[ -f $out/chained.pem ]] && openssl verify -CAfile "$ca/ca.pem" "$out/other.pem" >/dev/null 2>&1 \
                && cmp -s <(cat "$ca/server.pem" "$ca/ca.pem") "$out/chained.pem"; then exit 0; fi
            work=$(mktemp -d "$out/.work.XXXXXX"); trap 'rm -rf "$work"' EXIT
            openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$work/other.key" 2>/dev/null
            openssl req -new -key "$work/other.key" -subj /CN=localhost -out "$work/other.csr" 2>/dev/null
            printf 'basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\n\#
            extendedKeyUsage=serverAuth\nsubjectAltName=DNS:localhost,IP:127.0.0.1\n' >"$work/ext"
            openssl x509 -req -in "$work/other.csr" -CA "$ca/ca.pem" -CAkey "$ca/ca.key" -set_serial "0x$(openssl rand -hex 16)" \
                -days 30 -sha256 -extfile "$work/ext" -out "$work/other.pem" 2>/dev/null
            cat "$ca/server.pem" "$ca/ca.pem" >"$work/chained.pem"
            cp "$ca/server.key" "$work/chained.key"
            mv -f "$work/other.key" "$work/other.pem" "$work/chained.key" "$out/"
            mv -f "$work/chained.pem" "$out/chained.pem"
            """#, arguments: [ca])
    }()
}
