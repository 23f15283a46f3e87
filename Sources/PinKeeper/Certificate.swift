import CLibcrypto
import FoundationEssentials  // not Foundation: a process linking only this library loads no ICU
import Glibc

/// An X.509 certificate as pinning sees it: its exact DER bytes, their SHA-256 (what a Wultra
/// list pins), and the subject's most specific common name (the name the list is keyed by).
public struct Certificate: Sendable, Hashable {
    /// The DER encoding exactly as read or presented; the fingerprint is computed over these bytes.
    public let der: [UInt8]
    /// Raw SHA-256 of `der` (32 bytes).
    public let fingerprint: [UInt8]
    /// The most specific (last in DER order) CN of the subject, as Android's
    /// `DistinguishedNameParser.findMostSpecific("CN")` picks it; nil when the subject has none.
    public let commonName: String?
    /// The subject in RFC 2253 form, e.g. `CN=api.example.com,O=Example`.
    public let subject: String
    /// The end of the validity period (`notAfter`) in Unix seconds: what a list entry's
    /// `expires` is set to.
    public let notAfter: Int64?

    /// Parses exactly one DER certificate; trailing bytes are an error.
    public init(der: [UInt8]) throws(CertificateError) {
        let parsed = try Self.parseDER(der, at: 0)
        guard parsed.consumed == der.count else {
            throw CertificateError(.trailingBytes, "\(der.count - parsed.consumed) bytes follow the certificate")
        }
        self = parsed.certificate
    }

    private init(x509: OpaquePointer, der: [UInt8]) {
        self.der = der
        self.fingerprint = SHA256.digest(der)
        let name = X509_get_subject_name(x509)
        self.commonName = name.flatMap(Self.mostSpecificCommonName)
        self.subject = name.map(Self.rfc2253) ?? ""
        self.notAfter = Self.unixTime(X509_get0_notAfter(x509))
    }

    /// Standard base64 of the fingerprint, as in list entries.
    public var fingerprintBase64: String { Data(fingerprint).base64EncodedString() }

    /// Every certificate in `data`, in file order (a chain is leaf first: index = depth).
    /// PEM (any number of `CERTIFICATE` blocks; other blocks such as keys are skipped) or DER
    /// (one certificate or several concatenated) is detected from the content.
    public static func chain(from data: [UInt8]) throws(CertificateError) -> [Certificate] {
        if isPEM(data) { return try pemChain(data) }
        guard data.first == 0x30 else {
            if data.isEmpty { throw CertificateError(.empty, "the input is empty") }
            throw CertificateError(.neitherPEMNorDER, "the input is neither PEM nor DER")
        }
        var chain: [Certificate] = []
        var offset = 0
        while offset < data.count {
            let parsed: (certificate: Certificate, consumed: Int)
            do {
                parsed = try parseDER(data, at: offset)
            } catch {
                throw CertificateError(error.code, "certificate \(chain.count + 1) (at byte \(offset)): \(error.reason)")
            }
            chain.append(parsed.certificate)
            offset += parsed.consumed
        }
        return chain
    }

    // MARK: Parsing

    private static func isPEM(_ data: [UInt8]) -> Bool {
        let marker = Array("-----BEGIN ".utf8)
        guard data.count >= marker.count else { return false }
        for start in 0...(data.count - marker.count) where data[start] == 0x2D {
            if data[start..<(start + marker.count)].elementsEqual(marker) { return true }
        }
        return false
    }

    private static func parseDER(_ data: [UInt8], at offset: Int) throws(CertificateError) -> (certificate: Certificate, consumed: Int) {
        ERR_clear_error()
        let result: (OpaquePointer, Int)? = data.withUnsafeBufferPointer { buffer in
            guard let base = buffer.baseAddress, offset < buffer.count else { return nil }
            let start = base + offset
            var cursor: UnsafePointer<UInt8>? = start
            guard let x509 = d2i_X509(nil, &cursor, buffer.count - offset), let end = cursor else { return nil }
            return (x509, end - start)
        }
        guard let (x509, consumed) = result else {
            throw CertificateError(.invalidDER, "not a DER X.509 certificate" + OpenSSLErrors.drain())
        }
        defer { X509_free(x509) }
        return (Certificate(x509: x509, der: Array(data[offset..<(offset + consumed)])), consumed)
    }

    private static func pemChain(_ data: [UInt8]) throws(CertificateError) -> [Certificate] {
        ERR_clear_error()
        var chain: [Certificate] = []
        let failure: CertificateError? = data.withUnsafeBytes { bytes in
            guard let bio = BIO_new_mem_buf(bytes.baseAddress, Int32(bytes.count)) else {
                return CertificateError(.openSSLFailure, "cannot allocate a memory BIO")
            }
            defer { BIO_free(bio) }
            while let x509 = PEM_read_bio_X509(bio, nil, nil, nil) {
                defer { X509_free(x509) }
                guard let der = encodeDER(x509) else {
                    return CertificateError(.openSSLFailure, "certificate \(chain.count + 1) cannot be re-encoded")
                }
                chain.append(Certificate(x509: x509, der: der))
            }
            // The loop ends with "no start line" at the end of the input; anything else is a broken block.
            let last = ERR_peek_last_error()
            if last != 0 && !(ERR_GET_LIB(last) == ERR_LIB_PEM && ERR_GET_REASON(last) == PEM_R_NO_START_LINE) {
                return CertificateError(.invalidPEM, "PEM block \(chain.count + 1) is not a valid certificate" + OpenSSLErrors.drain())
            }
            return nil
        }
        ERR_clear_error()
        if let failure { throw failure }
        guard !chain.isEmpty else { throw CertificateError(.noCertificate, "the PEM input holds no CERTIFICATE block") }
        return chain
    }

    /// The DER bytes of an OpenSSL `X509` (what a fingerprint hashes).
    public static func encodeDER(_ x509: OpaquePointer) -> [UInt8]? {
        let length = i2d_X509(x509, nil)
        guard length > 0 else { return nil }
        var der = [UInt8](repeating: 0, count: Int(length))
        let written = der.withUnsafeMutableBufferPointer { buffer -> Int32 in
            var cursor = buffer.baseAddress
            return i2d_X509(x509, &cursor)
        }
        return written == length ? der : nil
    }

    // MARK: Names and times

    private static func mostSpecificCommonName(_ name: OpaquePointer) -> String? {
        var index: Int32 = -1
        var last: Int32 = -1
        while true {
            index = X509_NAME_get_index_by_NID(name, NID_commonName, index)
            if index < 0 { break }
            last = index
        }
        guard last >= 0, let entry = X509_NAME_get_entry(name, last),
            let value = X509_NAME_ENTRY_get_data(entry)
        else { return nil }
        var utf8: UnsafeMutablePointer<UInt8>?
        let length = ASN1_STRING_to_UTF8(&utf8, value)
        guard length >= 0, let utf8 else { return nil }
        defer { CRYPTO_free(utf8, nil, 0) }
        return String(decoding: UnsafeBufferPointer(start: utf8, count: Int(length)), as: UTF8.self)
    }

    private static func rfc2253(_ name: OpaquePointer) -> String {
        guard let bio = BIO_new(BIO_s_mem()) else { return "" }
        defer { BIO_free(bio) }
        // RFC 2253 escaping, but UTF-8 left readable instead of \XX-escaped.
        // XN_FLAG_RFC2253 is a macro Swift cannot import; these are its parts (openssl/x509.h, asn1.h).
        let rfc2253Strings = UInt(
            ASN1_STRFLGS_ESC_2253 | ASN1_STRFLGS_ESC_CTRL | ASN1_STRFLGS_UTF8_CONVERT
                | ASN1_STRFLGS_DUMP_UNKNOWN | ASN1_STRFLGS_DUMP_DER)
        let flags = rfc2253Strings | UInt(XN_FLAG_SEP_COMMA_PLUS | XN_FLAG_DN_REV | XN_FLAG_FN_SN | XN_FLAG_DUMP_UNKNOWN_FIELDS)
        guard X509_NAME_print_ex(bio, name, 0, flags) >= 0 else { return "" }
        let pending = Int(BIO_ctrl_pending(bio))
        var text = [UInt8](repeating: 0, count: pending)
        let read = text.withUnsafeMutableBytes { BIO_read(bio, $0.baseAddress, Int32($0.count)) }
        return String(decoding: text.prefix(max(0, Int(read))), as: UTF8.self)
    }

    private static func unixTime(_ time: UnsafePointer<ASN1_TIME>?) -> Int64? {
        guard let time else { return nil }
        var parts = tm()
        guard ASN1_TIME_to_tm(time, &parts) == 1 else { return nil }
        return Int64(timegm(&parts))
    }
}

/// Why certificate bytes could not be read: a `code` for programs, and words for people
/// (`reason`, with OpenSSL's reason when it gave one).
public struct CertificateError: Error, Equatable, Sendable, CustomStringConvertible {
    public enum Code: Sendable, Hashable {
        /// No bytes at all.
        case empty
        /// Neither a PEM block nor a DER sequence.
        case neitherPEMNorDER
        /// DER bytes that are not an X.509 certificate (in a chain: one of them).
        case invalidDER
        /// A whole certificate followed by more bytes, where exactly one was asked for.
        case trailingBytes
        /// A PEM block that is not a valid certificate.
        case invalidPEM
        /// PEM input without a `CERTIFICATE` block (only keys, say).
        case noCertificate
        /// OpenSSL could not allocate or re-encode: not the input's fault.
        case openSSLFailure
    }

    public var code: Code
    public var reason: String

    public init(_ code: Code, _ reason: String) {
        self.code = code
        self.reason = reason
    }

    public var description: String { reason }
}

/// Turns the OpenSSL error queue into text for a message, and empties it.
enum OpenSSLErrors {
    static func drain() -> String {
        let reasons = OpenSSLErrorQueue.drain()
        return reasons.isEmpty ? "" : " (OpenSSL: \(reasons.joined(separator: "; ")))"
    }
}
