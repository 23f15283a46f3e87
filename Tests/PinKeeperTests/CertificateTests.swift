import Foundation
import PinKeeper
import Testing

@Suite("Certificates: PEM, DER, chains, common names")
struct CertificateTests {
    @Test("a DER certificate: fingerprint, subject and CN agree with openssl")
    func derLeaf() throws {
        let certificate = try Certificate(der: ReaderCertificates.bytes("leaf.der"))
        #expect(certificate.der == ReaderCertificates.bytes("leaf.der"))
        #expect(certificate.fingerprint == ReaderCertificates.fingerprint("leaf"))
        #expect(certificate.fingerprintBase64 == Data(ReaderCertificates.fingerprint("leaf")).base64EncodedString())
        #expect(certificate.subject == ReaderCertificates.subject("leaf"))
        #expect(certificate.notAfter != nil)
        #expect(certificate.notAfter == ReaderCertificates.notAfter("leaf"))
    }

    @Test("the most specific (last) CN is the common name, as Android's findMostSpecific picks it")
    func mostSpecificCommonName() throws {
        let certificate = try Certificate(der: ReaderCertificates.bytes("leaf.der"))
        #expect(certificate.commonName == "api.example.com")
        #expect(certificate.subject.hasPrefix("CN=api.example.com,CN=first.example.com,"))
    }

    @Test("a subject without CN has no common name")
    func noCommonName() throws {
        let certificate = try #require(try Certificate.chain(from: ReaderCertificates.bytes("nocn.pem")).first)
        #expect(certificate.commonName == nil)
        #expect(certificate.subject == "O=No Common Name")
    }

    @Test("a PEM file and the same certificate in DER give the same bytes and fingerprint")
    func pemEqualsDER() throws {
        let pem = try Certificate.chain(from: ReaderCertificates.bytes("leaf.pem"))
        #expect(pem.count == 1)
        #expect(pem.first?.der == ReaderCertificates.bytes("leaf.der"))
        #expect(pem.first?.fingerprint == ReaderCertificates.fingerprint("leaf"))
    }

    @Test("chains keep file order (index = depth), in PEM and in concatenated DER", arguments: ["chain.pem", "chain.der"])
    func chains(file: String) throws {
        let chain = try Certificate.chain(from: ReaderCertificates.bytes(file))
        #expect(chain.map(\.fingerprint) == ["leaf", "intermediate", "root"].map(ReaderCertificates.fingerprint))
        #expect(chain.map(\.commonName) == ["api.example.com", "Reader Test Intermediate", "Reader Test Root"])
    }

    @Test("non-certificate PEM blocks (a private key) are skipped")
    func keyBlockSkipped() throws {
        let chain = try Certificate.chain(from: ReaderCertificates.bytes("keyfirst.pem"))
        #expect(chain.map(\.fingerprint) == ["leaf", "intermediate"].map(ReaderCertificates.fingerprint))
    }

    @Test("garbage, empty input, a key-only PEM, truncated DER and a broken PEM block are errors")
    func rejects() throws {
        let der = ReaderCertificates.bytes("leaf.der")
        var broken = String(decoding: ReaderCertificates.bytes("chain.pem"), as: UTF8.self)
        // Damage the base64 of the second block: the first still parses, the file as a whole must not.
        let second = try #require(broken.ranges(of: "-----BEGIN CERTIFICATE-----\n").dropFirst().first)
        broken.replaceSubrange(second.upperBound..<broken.index(second.upperBound, offsetBy: 8), with: "!!!!!!!!")
        let inputs: [[UInt8]] = [
            Array("hello, world\n".utf8), [], ReaderCertificates.bytes("leaf.key"), Array(der.prefix(der.count - 10)),
            Array(broken.utf8),
        ]
        for input in inputs {
            #expect(throws: CertificateError.self) { try Certificate.chain(from: input) }
        }
        #expect(throws: CertificateError.self) { try Certificate(der: der + [0x00]) }
        #expect(throws: CertificateError.self) { try Certificate(der: Array(der.dropFirst())) }
    }

    @Test("each refusal carries its code, the same whatever OpenSSL adds to the reason")
    func refusalCodes() throws {
        let der = ReaderCertificates.bytes("leaf.der")
        var broken = String(decoding: ReaderCertificates.bytes("chain.pem"), as: UTF8.self)
        let first = try #require(broken.ranges(of: "-----BEGIN CERTIFICATE-----\n").first)
        broken.replaceSubrange(first.upperBound..<broken.index(first.upperBound, offsetBy: 8), with: "!!!!!!!!")
        let chains: [([UInt8], CertificateError.Code)] = [
            ([], .empty),
            (Array("hello, world\n".utf8), .neitherPEMNorDER),
            (ReaderCertificates.bytes("leaf.key"), .noCertificate),
            (Array(broken.utf8), .invalidPEM),
            (Array(der.prefix(der.count - 10)), .invalidDER),
            (der + Array(der.prefix(der.count - 10)), .invalidDER),
        ]
        for (input, code) in chains {
            let error = #expect(throws: CertificateError.self) { try Certificate.chain(from: input) }
            #expect(error?.code == code, "\(error?.reason ?? "accepted")")
        }
        #expect(throws: CertificateError(.trailingBytes, "1 bytes follow the certificate")) { try Certificate(der: der + [0x00]) }
        let truncated = #expect(throws: CertificateError.self) { try Certificate(der: Array(der.dropFirst())) }
        #expect(truncated?.code == .invalidDER)
    }
}
