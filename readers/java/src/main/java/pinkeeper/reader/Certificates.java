package pinkeeper.reader;

import java.io.ByteArrayInputStream;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.Charset;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.cert.Certificate;
import java.security.cert.CertificateEncodingException;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;
import javax.security.auth.x500.X500Principal;

/** Certificates as pinning sees them: the SHA-256 of their exact DER bytes and the subject's common name. */
public final class Certificates {
    private static final String PEM_BEGIN = "-----BEGIN CERTIFICATE-----";
    private static final String PEM_END = "-----END CERTIFICATE-----";

    private Certificates() {}

    /** Raw SHA-256 of {@code data}. */
    public static byte[] sha256(byte[] data) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(data);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java platform has SHA-256", e);
        }
    }

    /** Raw SHA-256 of the certificate's DER encoding: what a Wultra list pins. */
    public static byte[] fingerprint(X509Certificate certificate) {
        try {
            return sha256(certificate.getEncoded());
        } catch (CertificateEncodingException e) {
            throw new IllegalArgumentException("the certificate has no DER encoding: " + e.getMessage(), e);
        }
    }

    public static String fingerprintBase64(X509Certificate certificate) {
        return Base64.getEncoder().encodeToString(fingerprint(certificate));
    }

    /** The fingerprints of a chain, in its order. */
    public static List<byte[]> digests(List<X509Certificate> chain) {
        List<byte[]> digests = new ArrayList<>(chain.size());
        for (X509Certificate certificate : chain) digests.add(fingerprint(certificate));
        return digests;
    }

    /**
     * The subject's most specific common name N: the last CN in DER order, as OpenSSL-based
     * readers ({@code X509_NAME_get_index_by_NID} to the last entry, {@code ASN1_STRING_to_UTF8})
     * and the Python reader's DER walk take it; null when the subject has none, or when that CN
     * is not a valid string of a type read here (then H decides alone).
     *
     * <p>Read from the certificate's own DER, not from the JDK's RFC 2253 rendering of the
     * subject: {@code LdapName} sorts the values of a multi-valued RDN ({@code CN=zzz+CN=API.bank.com}
     * gave {@code zzz}), and the rendering reads a BMPString as bytes, a T61String as UTF-8 and a
     * UniversalString not at all. See {@link #commonNameOfDer}.
     */
    public static String commonName(X509Certificate certificate) {
        try {
            return commonNameOfDer(certificate.getEncoded());
        } catch (CertificateEncodingException e) {
            return null;
        }
    }

    private static final byte[] COMMON_NAME_OID = {0x55, 0x04, 0x03}; // 2.5.4.3

    /**
     * The most specific common name of a DER certificate: the subject (the sixth field of the
     * TBSCertificate, after the optional version, serial number, signature algorithm, issuer
     * and validity) is a SEQUENCE of RDNs, each a SET of AttributeTypeAndValue; every attribute
     * is visited in the order encoded (a multi-valued RDN's values in their DER order, never
     * sorted again) and the last one of type 2.5.4.3 is taken. Its string is decoded by its type:
     * UTF8String as UTF-8, BMPString as UTF-16BE, UniversalString as UTF-32BE, and the one-byte
     * types (PrintableString, IA5String, VisibleString, NumericString, T61String) one byte per
     * character, 0x00–0xFF, as {@code ASN1_STRING_to_UTF8} and the Python reader read them (for
     * the ASCII these types hold this is ASCII; T61String is Latin-1 to them too). An invalid
     * value (bad UTF-8, a lone surrogate, a code point beyond U+10FFFF, a length that is no
     * multiple of the unit), another type, or DER that cannot be walked: null.
     */
    static String commonNameOfDer(byte[] der) {
        try {
            Der tbs = new Der(der, 0, der.length).inside(0x30).inside(0x30);
            Der.Element field = tbs.next();
            if (field.tag == 0xA0) field = tbs.next(); // [0] version
            if (field.tag != 0x02) return null;          // serial number
            for (int skipped = 0; skipped < 3; skipped++) tbs.inside(0x30); // signature, issuer, validity
            Der subject = tbs.inside(0x30);
            Der.Element found = null;
            while (subject.more()) {
                Der relative = subject.inside(0x31);
                while (relative.more()) {
                    Der attribute = relative.inside(0x30);
                    Der.Element type = attribute.next();
                    if (type.tag == 0x06 && type.contentEquals(COMMON_NAME_OID)) found = attribute.next();
                }
            }
            return found == null ? null : decodeString(found.tag, Arrays.copyOfRange(der, found.start, found.end));
        } catch (IllegalArgumentException e) {
            return null;
        }
    }

    /** A directory string's value by its universal tag; null when the type is not one of these or the value is invalid in it. */
    private static String decodeString(int tag, byte[] value) {
        switch (tag) {
            case 0x0C: return strictly(StandardCharsets.UTF_8, value);      // UTF8String
            case 0x12:                                                     // NumericString
            case 0x13:                                                     // PrintableString
            case 0x14:                                                     // T61String (TeletexString)
            case 0x16:                                                     // IA5String
            case 0x1A: return new String(value, StandardCharsets.ISO_8859_1); // VisibleString
            case 0x1E: return value.length % 2 == 0 ? strictly(StandardCharsets.UTF_16BE, value) : null; // BMPString
            case 0x1C: return utf32(value);                                // UniversalString
            default: return null;
        }
    }

    /** {@code value} in {@code charset}, or null when it is not valid there (no replacement characters). */
    private static String strictly(Charset charset, byte[] value) {
        try {
            return charset.newDecoder().onMalformedInput(CodingErrorAction.REPORT).onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(value)).toString();
        } catch (CharacterCodingException e) {
            return null;
        }
    }

    /** UTF-32BE: four bytes per Unicode scalar (no surrogates, nothing beyond U+10FFFF); null otherwise. */
    private static String utf32(byte[] value) {
        if (value.length % 4 != 0) return null;
        StringBuilder text = new StringBuilder(value.length / 4);
        for (int index = 0; index < value.length; index += 4) {
            long scalar = ((value[index] & 0xFFL) << 24) | ((value[index + 1] & 0xFF) << 16) | ((value[index + 2] & 0xFF) << 8)
                    | (value[index + 3] & 0xFF);
            if (scalar > Character.MAX_CODE_POINT || (scalar >= Character.MIN_SURROGATE && scalar <= Character.MAX_SURROGATE)) return null;
            text.appendCodePoint((int) scalar);
        }
        return text.toString();
    }

    /**
     * Just enough DER to reach a certificate's subject: one-byte tags and definite lengths (short
     * form, or long form of 1 to 4 bytes), each element inside its container. Anything else
     * throws {@link IllegalArgumentException}.
     */
    private static final class Der {
        /** An element: its tag and where its content lies in the data. */
        static final class Element {
            final byte[] data;
            final int tag;
            final int start;
            final int end;

            Element(byte[] data, int tag, int start, int end) {
                this.data = data;
                this.tag = tag;
                this.start = start;
                this.end = end;
            }

            boolean contentEquals(byte[] expected) {
                return Arrays.equals(data, start, end, expected, 0, expected.length);
            }
        }

        private final byte[] data;
        private int offset;
        private final int end;

        Der(byte[] data, int start, int end) {
            this.data = data;
            this.offset = start;
            this.end = end;
        }

        boolean more() {
            return offset < end;
        }

        Element next() {
            if (end - offset < 2) throw new IllegalArgumentException("ends inside an element");
            int tag = data[offset] & 0xFF;
            if ((tag & 0x1F) == 0x1F) throw new IllegalArgumentException("has a multi-byte tag");
            int first = data[offset + 1] & 0xFF;
            int start = offset + 2;
            long length = first;
            if (first >= 0x80) {
                int count = first & 0x7F;
                if (count < 1 || count > 4 || end - start < count) throw new IllegalArgumentException("has an invalid length");
                length = 0;
                for (int index = 0; index < count; index++) length = (length << 8) | (data[start + index] & 0xFF);
                start += count;
            }
            if (length > end - start) throw new IllegalArgumentException("has an element longer than its container");
            offset = start + (int) length;
            return new Element(data, tag, start, offset);
        }

        Der inside(int expectedTag) {
            Element element = next();
            if (element.tag != expectedTag) throw new IllegalArgumentException("has another element where a " + expectedTag + " belongs");
            return new Der(data, element.start, element.end);
        }
    }

    /** The subject in RFC 2253 form, e.g. {@code CN=api.example.com,O=Example}. */
    public static String subject(X509Certificate certificate) {
        return certificate.getSubjectX500Principal().getName(X500Principal.RFC2253);
    }

    /**
     * Every certificate in {@code data}, in file order (a chain is leaf first). PEM (any number of
     * CERTIFICATE blocks; other blocks such as keys are skipped) or DER (one or several
     * concatenated) is detected from the content. The certificates keep their bytes as read.
     */
    public static List<X509Certificate> read(byte[] data) throws CertificateException {
        if (data.length == 0) throw new CertificateException("the input is empty");
        CertificateFactory factory = CertificateFactory.getInstance("X.509");
        String text = new String(data, StandardCharsets.ISO_8859_1);
        List<X509Certificate> chain = new ArrayList<>();
        if (text.contains("-----BEGIN ")) {
            int from = 0;
            while (true) {
                int begin = text.indexOf(PEM_BEGIN, from);
                if (begin < 0) break;
                int end = text.indexOf(PEM_END, begin);
                if (end < 0) throw new CertificateException("PEM block " + (chain.size() + 1) + " has no END line");
                byte[] der;
                try {
                    der = Base64.getMimeDecoder().decode(text.substring(begin + PEM_BEGIN.length(), end));
                } catch (IllegalArgumentException e) {
                    throw new CertificateException("PEM block " + (chain.size() + 1) + " is not valid base64");
                }
                chain.add(parseOne(factory, der, "PEM block " + (chain.size() + 1)));
                from = end + PEM_END.length();
            }
            if (chain.isEmpty()) throw new CertificateException("the PEM input holds no CERTIFICATE block");
            return chain;
        }
        if ((data[0] & 0xff) != 0x30) throw new CertificateException("the input is neither PEM nor DER");
        for (Certificate certificate : factory.generateCertificates(new ByteArrayInputStream(data))) {
            chain.add((X509Certificate) certificate);
        }
        if (chain.isEmpty()) throw new CertificateException("the input holds no DER certificate");
        return chain;
    }

    private static X509Certificate parseOne(CertificateFactory factory, byte[] der, String what) throws CertificateException {
        try {
            return (X509Certificate) factory.generateCertificate(new ByteArrayInputStream(der));
        } catch (CertificateException e) {
            throw new CertificateException(what + " is not a valid certificate: " + e.getMessage(), e);
        }
    }
}
