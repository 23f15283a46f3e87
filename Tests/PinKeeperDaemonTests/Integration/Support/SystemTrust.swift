import CCurl
import CLibcrypto
import Foundation
import Glibc
@testable import PinKeeperDaemon

/// The machine's own CA directories, for tests that need a CA the system trusts and a store's
/// `ca_file` does not. A CA is added as OpenSSL's hashed link `<subject hash>.N` for the length
/// of one test and removed after it; only root can do that.
enum SystemTrust {
    /// libcurl's compiled-in CA directory (CURLINFO_CAPATH) and OpenSSL's default one
    /// (X509_get_default_cert_dir), resolved and without duplicates (one directory on Debian).
    static let directories: [String] = {
        var found: [String] = []
        if CurlLibrary.load() == nil, let easy = pk_curl_easy_init() {
            var path: UnsafeMutablePointer<CChar>?
            if pk_curl_get_string(easy, CURLINFO_CAPATH, &path) == CURLE_OK, let path { found.append(String(cString: path)) }
            pk_curl_easy_cleanup(easy)
        }
        if let path = X509_get_default_cert_dir() { found.append(String(cString: path)) }
        var resolved: [String] = []
        for path in found {
            let real = URL(fileURLWithPath: path).resolvingSymlinksInPath().path
            if !resolved.contains(real) { resolved.append(real) }
        }
        return resolved
    }()

    /// nil when a CA can be added here; otherwise why not (the reason a test is skipped with).
    static let unavailable: String? = {
        guard getuid() == 0 else { return "adding a CA to the system trust store needs root" }
        guard !directories.isEmpty else { return "libcurl has no compiled-in CA directory (CURLINFO_CAPATH)" }
        for dir in directories where access(dir, W_OK) != 0 {
            return "the system CA directory \(dir) is not writable"
        }
        return nil
    }()

    static var isAvailable: Bool { unavailable == nil }

    /// The label of the temporary directory whose CAs may be linked: it carries the process id,
    /// so that links left behind by a killed test run can be told from those of a running one.
    static var pkiLabel: String { "systemtrust-\(getpid())" }

    /// Runs `body` while every system CA directory trusts the certificate in `pem` (which must lie
    /// in a `TestPKI(SystemTrust.pkiLabel)` directory); the links are removed however `body` ends.
    static func trusting<T>(_ pem: String, _ body: () async throws -> T) async throws -> T {
        removeStaleLinks()
        let hash = OpenSSL.shell(#"openssl x509 -hash -noout -in "$1""#, arguments: [pem])
        var links: [String] = []
        defer { for link in links { unlink(link) } }
        for dir in directories {
            // OpenSSL tries <hash>.0, .1, … up to the first missing one; another CA may share the hash.
            var index = 0
            while symlink(pem, "\(dir)/\(hash).\(index)") != 0 {
                guard errno == EEXIST, index < 100 else {
                    throw FixtureError("cannot link \(pem) into \(dir): \(String(cString: strerror(errno)))")
                }
                index += 1
            }
            links.append("\(dir)/\(hash).\(index)")
        }
        return try await body()
    }

    /// Links into a `systemtrust-<pid>` directory of a process that no longer exists.
    private static func removeStaleLinks() {
        for dir in directories {
            for name in (try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? [] {
                let link = "\(dir)/\(name)"
                guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: link),
                    let range = target.range(of: "/pinkeeper-pki-systemtrust-")
                else { continue }
                let pid = target[range.upperBound...].prefix { $0.isNumber }
                if let pid = Int32(pid), kill(pid, 0) != 0 && errno == ESRCH { unlink(link) }
            }
        }
    }
}
