import FoundationEssentials
import Glibc
import PinKeeper
import PinKeeperDaemon

/// `validate --connect`: a handshake verified by OpenSSL for H, the host's one form (an IP
/// literal against the certificate's addresses and without SNI; a DNS name as SNI and host name).
struct ValidateConnection {
    let report: ValidateReport
    let store: String
    let timeout: Int

    /// The chain OpenSSL verified for the host, leaf first; exits when verification fails.
    func verifiedChain(_ endpoint: Endpoint, caFile: String?) -> [Certificate] {
        let host = report.host
        let handshake: TLSHandshake
        do {
            handshake = try TLSConnect.handshake(
                host: endpoint.host, port: endpoint.port, serverName: host, caFile: caFile, timeoutSeconds: timeout)
        } catch {
            switch error.kind {
            case .unknownHost: ValidateReport.fail(68, error.description)
            case .unavailable: ValidateReport.fail(69, error.description)
            case .caFile: ValidateReport.fail(78, "store '\(store)': ca_file: \(error.description)")
            case .setup, .cancelled: ValidateReport.fail(70, error.description)
            }
        }
        let isAddress = HostName.isIPAddress(host)
        let sent = isAddress ? "no server name (an IP address is not sent as SNI)" : "server name \(host)"
        report.detail("connected to \(handshake.peer) (\(handshake.protocolVersion), \(handshake.cipher)), \(sent)")
        if let failure = handshake.verificationFailure {
            report.detail("presented by the server (not verified), in the order sent:")
            report.chain(ValidateCertificates.parse(handshake.presentedChain, "the server's certificate"), verified: false)
            report.answer("untrusted: TLS verification for '\(host)' failed: \(failure); pins were not consulted", status: 1)
        }
        // Pins are compared with the path OpenSSL verified, never with what the server sent: a
        // server may append any public certificate, which path building ignores.
        report.detail("chain and \(isAddress ? "IP address" : "host name") verified for '\(host)'; the verified chain, leaf first:")
        let verified = ValidateCertificates.parse(handshake.verifiedChain, "the verified chain's certificate")
        report.chain(verified)
        for der in handshake.presentedChain where !handshake.verifiedChain.contains(der) {
            guard let extra = try? Certificate(der: der) else { continue }
            report.detail("not in the verified chain, ignored: \(ValidateReport.describe(extra))")
        }
        return verified
    }
}

/// Certificates read for `validate`: a file standing for a verified chain, or DER from a handshake.
enum ValidateCertificates {
    static func readChain(_ path: String) -> [Certificate] {
        guard let data = FileManager.default.contents(atPath: path) else {
            let reason = FileManager.default.fileExists(atPath: path) ? "cannot be read (check its permissions)" : "does not exist"
            ValidateReport.fail(66, "certificate file \(path) \(reason)")
        }
        do {
            return try Certificate.chain(from: Array(data))
        } catch {
            ValidateReport.fail(65, "certificate file \(path): \(error)")
        }
    }

    static func parse(_ chain: [[UInt8]], _ what: String) -> [Certificate] {
        var certificates: [Certificate] = []
        for (depth, der) in chain.enumerated() {
            do {
                certificates.append(try Certificate(der: der))
            } catch {
                ValidateReport.fail(65, "\(what) at depth \(depth) cannot be parsed: \(error)")
            }
        }
        return certificates
    }
}
