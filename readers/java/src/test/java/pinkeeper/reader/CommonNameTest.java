package pinkeeper.reader;

import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static pinkeeper.reader.TestDer.BMP_STRING;
import static pinkeeper.reader.TestDer.GENERAL_STRING;
import static pinkeeper.reader.TestDer.IA5_STRING;
import static pinkeeper.reader.TestDer.OCTET_STRING;
import static pinkeeper.reader.TestDer.ORGANIZATION;
import static pinkeeper.reader.TestDer.PRINTABLE_STRING;
import static pinkeeper.reader.TestDer.T61_STRING;
import static pinkeeper.reader.TestDer.UNIVERSAL_STRING;
import static pinkeeper.reader.TestDer.UTF8_STRING;
import static pinkeeper.reader.TestDer.VISIBLE_STRING;
import static pinkeeper.reader.TestDer.attribute;
import static pinkeeper.reader.TestDer.bytes;
import static pinkeeper.reader.TestDer.commonName;
import static pinkeeper.reader.TestDer.name;
import static pinkeeper.reader.TestDer.rdn;

import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.api.io.TempDir;

/**
 * N, the leaf's most specific common name, as every reader takes it: the last CN of the subject
 * in DER order (a multi-valued RDN's values in the order they are encoded), its string decoded
 * by its type as OpenSSL's {@code ASN1_STRING_to_UTF8} (the Swift reader) and the Python
 * reader's DER walk ({@code certificate_common_name}) decode it; an invalid value gives no CN.
 * The expected names are what the Python walk gives for these certificates (it raises for the
 * invalid ones), checked when the cases were written. What OpenSSL makes of each certificate is
 * checked here: the subject {@code openssl x509 -subject -nameopt RFC2253,-esc_msb} prints (the
 * RDNs reversed, so its first CN is the one taken), or that it cannot load the certificate.
 */
class CommonNameTest {
    /** {@code openssl}: the subject OpenSSL prints, or {@link #REFUSED}. */
    record Case(String id, X509Certificate certificate, String expected, String openssl) {}

    /**
     * OpenSSL (3.0) cannot load the certificate: it converts the subject's strings to UTF-8 as it
     * decodes, and refuses invalid ones, types it has no conversion for, VisibleString, and a
     * surrogate pair in a BMPString (UCS-2 to it). A reader built on OpenSSL never gets to the
     * common name; this one, whose platform accepts the certificate, takes none (or, for the
     * valid strings, what the Python reader's DER walk takes).
     */
    static final String REFUSED = "(openssl cannot load it)";

    @TempDir
    static Path directory;

    static TestPki pki;
    static final List<Case> CASES = new ArrayList<>();

    static byte[] encoded(String text, String charset) {
        return text.getBytes(Charset.forName(charset));
    }

    @BeforeAll
    static void makeCertificates() throws Exception {
        pki = new TestPki(Files.createDirectory(directory.resolve("pki")));
        // Made by openssl req: DER sorts a SET by encoding, so the shorter value comes first.
        CASES.add(new Case("multi-valued RDN (openssl -multivalue-rdn)",
                pki.selfSignedSubject("multi", "/CN=zzz+CN=API.bank.com", "default", true).certificate(), "API.bank.com",
                "CN=API.bank.com+CN=zzz"));
        CASES.add(new Case("multi-valued RDN, the longer value last",
                pki.selfSignedSubject("multi2", "/CN=aaaa+CN=zz", "default", true).certificate(), "aaaa", "CN=aaaa+CN=zz"));
        CASES.add(new Case("several RDNs", pki.selfSignedSubject("rdns", "/CN=first/O=Example/CN=second", "default", false).certificate(),
                "second", "CN=second,O=Example,CN=first"));
        CASES.add(new Case("BMPString (string_mask default, beyond Latin-1)",
                pki.selfSignedSubject("bmp", "/CN=api.\u4f8b\u3048.jp", "default", false).certificate(), "api.\u4f8b\u3048.jp",
                "CN=api.\u4f8b\u3048.jp"));
        CASES.add(new Case("T61String (string_mask nombstr, Latin-1)",
                pki.selfSignedSubject("t61", "/CN=caf\u00e9.example", "nombstr", false).certificate(), "caf\u00e9.example",
                "CN=caf\u00e9.example"));
        CASES.add(new Case("UTF8String (string_mask utf8only)",
                pki.selfSignedSubject("utf8", "/CN=b\u00fccher.example", "utf8only", false).certificate(), "b\u00fccher.example",
                "CN=b\u00fccher.example"));

        // Built byte by byte.
        String supplementary = "api.\uD835\uDD1Fank.com"; // U+1D51F
        hand("UniversalString", name(rdn(commonName(UNIVERSAL_STRING, encoded(supplementary, "UTF-32BE")))), supplementary,
                "CN=" + supplementary);
        hand("BMPString with a surrogate pair", name(rdn(commonName(BMP_STRING, encoded("\uD835\uDD1F.example", "UTF-16BE")))),
                "\uD835\uDD1F.example", REFUSED);
        hand("multi-valued RDN whose SET is not sorted", name(rdn(commonName("API.bank.com"), commonName("zzz"))), "zzz",
                "CN=zzz+CN=API.bank.com");
        hand("multi-valued RDN mixing types", name(rdn(commonName("zzz"), attribute(ORGANIZATION, UTF8_STRING, encoded("Bank", "UTF-8")))),
                "zzz", "O=Bank+CN=zzz");
        hand("T61String", name(rdn(commonName(T61_STRING, bytes('c', 'a', 'f', 0xE9)))), "caf\u00e9", "CN=caf\u00e9");
        hand("PrintableString with a byte above 0x7F: one byte per character, as OpenSSL reads it",
                name(rdn(commonName(PRINTABLE_STRING, bytes('c', 'a', 'f', 0xE9)))), "caf\u00e9", "CN=caf\u00e9");
        hand("IA5String", name(rdn(commonName(IA5_STRING, encoded("api.bank.com", "US-ASCII")))), "api.bank.com", "CN=api.bank.com");
        hand("VisibleString", name(rdn(commonName(VISIBLE_STRING, encoded("api.bank.com", "US-ASCII")))), "api.bank.com", REFUSED);
        hand("version 1 (no version field)", null, "api.bank.com", "CN=api.bank.com");
        hand("no common name", name(rdn(attribute(ORGANIZATION, UTF8_STRING, encoded("Bank", "UTF-8")))), null, "O=Bank");
        hand("empty subject", name(), null, "");

        // Invalid values: no CN (H decides alone), even where an earlier CN is valid.
        hand("UTF8String that is not UTF-8", name(rdn(commonName(UTF8_STRING, bytes('a', 0xC3, 0x28)))), null, REFUSED);
        hand("UTF8String with an encoded surrogate", name(rdn(commonName(UTF8_STRING, bytes('a', 0xED, 0xA0, 0x80)))), null, REFUSED);
        hand("BMPString of odd length", name(rdn(commonName(BMP_STRING, bytes(0x00, 'a', 0x00)))), null, REFUSED);
        hand("BMPString with a lone surrogate", name(rdn(commonName(BMP_STRING, bytes(0x00, 'a', 0xD8, 0x35)))), null, REFUSED);
        hand("UniversalString beyond U+10FFFF", name(rdn(commonName(UNIVERSAL_STRING, bytes(0x00, 0x11, 0x00, 0x00)))), null, REFUSED);
        hand("UniversalString with a surrogate", name(rdn(commonName(UNIVERSAL_STRING, bytes(0x00, 0x00, 0xD8, 0x00)))), null, REFUSED);
        hand("UniversalString whose length is not a multiple of 4",
                name(rdn(commonName(UNIVERSAL_STRING, bytes(0x00, 0x00, 0x00, 'a', 0x00)))), null, REFUSED);
        hand("a CN that is an OCTET STRING", name(rdn(commonName(OCTET_STRING, encoded("api.bank.com", "US-ASCII")))), null, REFUSED);
        hand("a CN that is a GeneralString", name(rdn(commonName(GENERAL_STRING, encoded("api.bank.com", "US-ASCII")))), null, REFUSED);
        hand("the last CN invalid, an earlier one valid",
                name(rdn(commonName("api.bank.com")), rdn(commonName(UTF8_STRING, bytes('a', 0xC3, 0x28)))), null, REFUSED);
    }

    /** A hand-built case; a null {@code subject} is the v1 certificate of CN=api.bank.com. */
    static void hand(String id, byte[] subject, String expected, String openssl) throws Exception {
        X509Certificate certificate = subject == null ? TestDer.certificate(name(rdn(commonName("api.bank.com"))), false)
                : TestDer.certificate(subject);
        CASES.add(new Case(id, certificate, expected, openssl));
    }

    @Test
    void theMostSpecificCommonNameIsTheLastInDerOrderDecodedByItsStringType() {
        List<Executable> checks = new ArrayList<>();
        for (Case example : CASES) {
            checks.add(() -> assertEquals(example.expected(), Certificates.commonName(example.certificate()), example.id()));
        }
        assertAll(checks);
    }

    @Test
    void openSslReadsTheSubjectsAsTheCasesSay() throws Exception {
        List<Executable> checks = new ArrayList<>();
        int index = 0;
        for (Case example : CASES) {
            Path file = directory.resolve("case-" + index++ + ".pem");
            Files.writeString(file, TestDer.pem(example.certificate()), StandardCharsets.US_ASCII);
            String printed = pki.opensslOutput(file, "-noout", "-subject", "-nameopt", "RFC2253,-esc_msb");
            String expected = example.openssl().equals(REFUSED) ? null : "subject=" + example.openssl() + "\n";
            checks.add(() -> assertEquals(expected, printed, example.id()));
        }
        assertAll(checks);
    }
}
