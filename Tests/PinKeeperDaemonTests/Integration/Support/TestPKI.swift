import Foundation
import TestSupport

/// Throw-away CAs and server certificates for one test, made by the `openssl` CLI in a directory
/// of their own (removed with the value), so tests running in parallel never share or race on them.
/// Every CA gets a unique common name, hence a unique subject hash.
final class TestPKI: @unchecked Sendable {  // the directory is immutable; files are written before servers start
    let directory: URL

    init(_ label: String) {
        directory = TestEnvironment.temporaryDirectory("pki-\(label)")
    }

    deinit { try? FileManager.default.removeItem(at: directory) }

    func pem(_ name: String) -> String { directory.appendingPathComponent("\(name).pem").path }
    func key(_ name: String) -> String { directory.appendingPathComponent("\(name).key").path }

    /// A CA certificate `name.pem` (and `name.key`): self-signed, or an intermediate signed by `issuer`.
    /// Returns its subject common name.
    @discardableResult
    func ca(_ name: String, issuer: String? = nil) -> String {
        let commonName = "pinkeeper test \(name) \(UUID().uuidString.prefix(8))"
        make(
            name, commonName: commonName, issuer: issuer,
            extensions: "basicConstraints=critical,CA:TRUE\nkeyUsage=critical,keyCertSign,cRLSign\n")
        return commonName
    }

    /// A server certificate `name.pem` (and `name.key`) for `host` (DNS name, and CN unless
    /// `commonName` chooses another, as a certificate's holder may; default `localhost`) and
    /// `addresses` (IP SANs), signed by `issuer`.
    func leaf(_ name: String, issuer: String, host: String = "localhost", commonName: String? = nil, addresses: [String] = ["127.0.0.1"]) {
        make(
            name, commonName: commonName ?? host, issuer: issuer,
            extensions: """
                basicConstraints=critical,CA:FALSE
                keyUsage=critical,digitalSignature
                extendedKeyUsage=serverAuth
                subjectAltName=DNS:\(host)\(addresses.map { ",IP:\($0)" }.joined())

                """)
    }

    /// `name.pem` = the certificates `parts` in order, `name.key` = the first one's key: what a
    /// server configured with it presents.
    func bundle(_ name: String, _ parts: [String]) {
        let contents = parts.map { part in
            guard let text = try? String(contentsOfFile: pem(part), encoding: .utf8) else { preconditionFailure("no \(pem(part))") }
            return text
        }
        write(contents.joined(), to: pem(name))
        write((try? String(contentsOfFile: key(parts[0]), encoding: .utf8)) ?? "", to: key(name))
    }

    private func make(_ name: String, commonName: String, issuer: String?, extensions: String) {
        let ext = directory.appendingPathComponent("\(name).ext").path
        write(extensions + "subjectKeyIdentifier=hash\n", to: ext)
        // A config of our own, so that the result does not depend on the system openssl.cnf.
        let config = directory.appendingPathComponent("req.cnf").path
        write("[req]\ndistinguished_name=dn\nprompt=no\n[dn]\nCN=unused\n", to: config)
        let signer = issuer.map { ["-CA", pem($0), "-CAkey", key($0)] } ?? ["-signkey", key(name)]
        OpenSSL.shell(
            #"""
            openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1"
            openssl req -new -config "$2" -key "$1" -subj "/CN=$3" -out "$4.csr"
            openssl x509 -req -in "$4.csr" "${@:6}" -set_serial "0x$(openssl rand -hex 16)" -days 1 -sha256 \
                -extfile "$5" -out "$4"
            rm -f "$4.csr"
            """#, arguments: [key(name), config, commonName, pem(name), ext] + signer)
    }

    private func write(_ text: String, to path: String) {
        precondition(FileManager.default.createFile(atPath: path, contents: Data(text.utf8)), "cannot write \(path)")
    }
}
