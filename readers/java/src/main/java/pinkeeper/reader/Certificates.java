package pinkeeper.reader;

import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.cert.Certificate;
import java.security.cert.CertificateEncodingException;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import javax.naming.InvalidNameException;
import javax.naming.directory.Attribute;
import javax.naming.ldap.LdapName;
import javax.naming.ldap.Rdn;
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
     * The subject's most specific common name (the last CN in DER order), as Android's
     * {@code DistinguishedNameParser.findMostSpecific("CN")} picks it; null when there is none
     * or it is not a string.
     */
    public static String commonName(X509Certificate certificate) {
        LdapName name;
        try {
            name = new LdapName(certificate.getSubjectX500Principal().getName(X500Principal.RFC2253));
        } catch (InvalidNameException e) {
            return null;
        }
        String last = null;
        // LdapName lists RDNs right to left of the RFC 2253 string, which is DER order.
        for (Rdn rdn : name.getRdns()) {
            Attribute attribute = rdn.toAttributes().get("CN");
            if (attribute == null) continue;
            try {
                Object value = attribute.get(attribute.size() - 1);
                last = value instanceof String text ? text : null;
            } catch (javax.naming.NamingException e) {
                last = null;
            }
        }
        return last;
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
