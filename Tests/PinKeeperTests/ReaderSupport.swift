import Foundation
import Glibc
import PinKeeper
import TestSupport

/// Certificates made by the `openssl` CLI (an implementation independent of the code under
/// test) and kept under .build: a root, an intermediate and leaves, in PEM and DER, plus what
/// openssl itself says about them.
enum ReaderCertificates {
    /// `.build/reader-test-certs`, made once and reused while the leaf is valid for another day.
    static let directory: URL = {
        let dir = TestEnvironment.packageRoot.appendingPathComponent(".build/reader-test-certs")
        try? FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let script = #"""
            set -euo pipefail
            cd "$1"
            exec 9>.lock
            flock 9
            if [[ -f complete ]] && openssl x509 -checkend 86400 -noout -in leaf.pem >/dev/null 2>&1; then exit 0; fi
            rm -f complete
            key() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1.key" 2>/dev/null; }
            printf 'basicConstraints=critical,CA:TRUE\nkeyUsage=critical,keyCertSign\n' >ca.ext
            printf 'basicConstraints=critical,CA:FALSE\nsubjectAltName=DNS:api.example.com\n' >leaf.ext
            key root
            openssl req -x509 -new -key root.key -subj "/CN=Reader Test Root" -days 30 -sha256 -out root.pem 2>/dev/null
            key intermediate
            openssl req -new -key intermediate.key -subj "/CN=Reader Test Intermediate" -out intermediate.csr 2>/dev/null
            openssl x509 -req -in intermediate.csr -CA root.pem -CAkey root.key -set_serial 2 -days 30 -sha256 \
                -extfile ca.ext -out intermediate.pem 2>/dev/null
            # Two CNs: the most specific (last in DER order) is the one pins are listed under.
            key leaf
            openssl req -new -key leaf.key -subj "/O=Example Ltd/CN=first.example.com/CN=api.example.com" -out leaf.csr 2>/dev/null
            openssl x509 -req -in leaf.csr -CA intermediate.pem -CAkey intermediate.key -set_serial 3 -days 20 -sha256 \
                -extfile leaf.ext -out leaf.pem 2>/dev/null
            key nocn
            openssl req -x509 -new -key nocn.key -subj "/O=No Common Name" -days 10 -sha256 -out nocn.pem 2>/dev/null
            for c in root intermediate leaf nocn; do
                openssl x509 -in $c.pem -outform DER -out $c.der
                openssl x509 -in $c.pem -noout -fingerprint -sha256 | sed 's/.*=//; s/://g' >$c.sha256
                openssl x509 -in $c.pem -noout -subject -nameopt RFC2253 | sed 's/^subject=//' >$c.subject
                date -u -d "$(openssl x509 -in $c.pem -noout -enddate | sed 's/^notAfter=//')" +%s >$c.notafter
            done
            cat leaf.pem intermediate.pem root.pem >chain.pem
            cat leaf.der intermediate.der root.der >chain.der
            # A key block before the certificates, as in a combined key+chain file.
            cat leaf.key leaf.pem intermediate.pem >keyfirst.pem
            touch complete
            """#
        let result = ChildProcess.run("/bin/bash", ["-c", script, "bash", dir.path], timeout: 120)
        precondition(result.status == 0, "making the test certificates with openssl failed: \(result.stderr)")
        return dir
    }()

    static func bytes(_ name: String) -> [UInt8] {
        Array((try? Data(contentsOf: directory.appendingPathComponent(name))) ?? Data())
    }

    /// openssl's SHA-256 of the certificate's DER, as raw bytes.
    static func fingerprint(_ name: String) -> [UInt8] {
        let hex = text("\(name).sha256")
        var bytes: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex, let next = hex.index(index, offsetBy: 2, limitedBy: hex.endIndex) {
            bytes.append(UInt8(hex[index..<next], radix: 16) ?? 0)
            index = next
        }
        return bytes
    }

    static func subject(_ name: String) -> String { text("\(name).subject") }

    /// openssl's notAfter, converted to Unix seconds by GNU date.
    static func notAfter(_ name: String) -> Int64? { Int64(text("\(name).notafter")) }

    private static func text(_ file: String) -> String {
        ((try? String(contentsOf: directory.appendingPathComponent(file), encoding: .utf8)) ?? "")
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }
}

/// A directory holding one store's cache file, replaced the way the daemon replaces it.
final class CacheFixture: @unchecked Sendable {  // the path is immutable; the file is the shared state, as in production
    let directory: URL
    let store: String

    init(store: String = "banking") {
        self.store = store
        directory = TestEnvironment.temporaryDirectory("reader")
    }

    deinit { try? FileManager.default.removeItem(at: directory) }

    var path: String { directory.appendingPathComponent("\(store).json").path }

    /// Writes a temporary file and renames it over the cache file (a new inode, like the daemon).
    func publish(_ pins: [Pin], domainsConfig: DomainsConfig? = nil, store owner: String? = nil) {
        let file = CacheFile(
            list: PinList(pins: pins, domainsConfig: domainsConfig),
            metadata: .init(
                store: owner ?? store, source: "https://pins.example.com/list",
                updated: Sample.now - 60, nextUpdate: Sample.now + 3_600))
        replace(with: file.encoded())
    }

    /// `mode`, when given, is set on the temporary file before the rename (as the daemon does).
    func replace(with bytes: Data, mode: mode_t? = nil) {
        let temp = directory.appendingPathComponent(".\(store).json.tmp")
        _ = FileManager.default.createFile(atPath: temp.path, contents: bytes)
        if let mode { _ = chmod(temp.path, mode) }
        _ = Glibc.rename(temp.path, path)
    }

    func write(_ name: String, _ bytes: Data) -> String {
        let file = directory.appendingPathComponent(name)
        _ = FileManager.default.createFile(atPath: file.path, contents: bytes)
        return file.path
    }
}
