package pinkeeper.reader;

import java.io.ByteArrayOutputStream;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.SecureRandom;
import java.security.Signature;
import java.security.cert.X509Certificate;
import java.security.spec.ECGenParameterSpec;
import java.util.Base64;

/**
 * Certificates built byte by byte, for subjects the openssl command line does not make: any
 * string type for a common name (UniversalString, a PrintableString with bytes above 0x7F),
 * invalid values, a multi-valued RDN whose SET is not in sorted order. Issued by
 * {@code CN=pinkeeper test issuer} (the JDK refuses an empty issuer) and signed with a fresh P-256
 * key that is the subject's own: nothing here verifies them, but openssl and the JDK parse them as
 * any certificate.
 */
final class TestDer {
    static final byte[] COMMON_NAME = {0x55, 0x04, 0x03};      // 2.5.4.3
    static final byte[] ORGANIZATION = {0x55, 0x04, 0x0A};     // 2.5.4.10
    static final int UTF8_STRING = 0x0C;
    static final int PRINTABLE_STRING = 0x13;
    static final int T61_STRING = 0x14;
    static final int IA5_STRING = 0x16;
    static final int VISIBLE_STRING = 0x1A;
    static final int GENERAL_STRING = 0x1B;
    static final int UNIVERSAL_STRING = 0x1C;
    static final int BMP_STRING = 0x1E;
    static final int OCTET_STRING = 0x04;

    private static final byte[] ECDSA_WITH_SHA256 =
            sequence(tlv(0x06, new byte[] {0x2A, (byte) 0x86, 0x48, (byte) 0xCE, 0x3D, 0x04, 0x03, 0x02}));
    private static final SecureRandom RANDOM = new SecureRandom();

    private TestDer() {}

    /** One DER element: tag, definite length (short or long form), the parts concatenated. */
    static byte[] tlv(int tag, byte[]... parts) {
        ByteArrayOutputStream content = new ByteArrayOutputStream();
        for (byte[] part : parts) content.writeBytes(part);
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.write(tag);
        int length = content.size();
        if (length < 0x80) {
            out.write(length);
        } else {
            byte[] digits = BigInteger.valueOf(length).toByteArray();
            int skip = digits[0] == 0 ? 1 : 0;
            out.write(0x80 | (digits.length - skip));
            out.write(digits, skip, digits.length - skip);
        }
        out.writeBytes(content.toByteArray());
        return out.toByteArray();
    }

    static byte[] sequence(byte[]... parts) {
        return tlv(0x30, parts);
    }

    /** An RDN: the attributes in the order given (DER would sort them; a parser must keep what it reads). */
    static byte[] rdn(byte[]... attributes) {
        return tlv(0x31, attributes);
    }

    static byte[] attribute(byte[] type, int stringTag, byte[] value) {
        return sequence(tlv(0x06, type), tlv(stringTag, value));
    }

    static byte[] commonName(int stringTag, byte[] value) {
        return attribute(COMMON_NAME, stringTag, value);
    }

    static byte[] commonName(String printable) {
        return commonName(PRINTABLE_STRING, printable.getBytes(StandardCharsets.US_ASCII));
    }

    /** A Name: the RDNs in DER order (the most specific last). */
    static byte[] name(byte[]... rdns) {
        return sequence(rdns);
    }

    static byte[] bytes(int... values) {
        byte[] bytes = new byte[values.length];
        for (int index = 0; index < values.length; index++) bytes[index] = (byte) values[index];
        return bytes;
    }

    /** A v3 certificate with {@code subject} as subject, signed; {@code version} false leaves the version out (v1). */
    static X509Certificate certificate(byte[] subject, boolean version) throws Exception {
        KeyPairGenerator generator = KeyPairGenerator.getInstance("EC");
        generator.initialize(new ECGenParameterSpec("secp256r1"));
        KeyPair key = generator.generateKeyPair();
        byte[] serial = new byte[9];
        RANDOM.nextBytes(serial);
        serial[0] = 0x01;
        byte[] validity = sequence(tlv(0x17, "250101000000Z".getBytes(StandardCharsets.US_ASCII)),
                tlv(0x17, "491231235959Z".getBytes(StandardCharsets.US_ASCII)));
        byte[] tbs = sequence(version ? tlv(0xA0, tlv(0x02, bytes(0x02))) : new byte[0], tlv(0x02, serial), ECDSA_WITH_SHA256,
                name(rdn(commonName("pinkeeper test issuer"))), validity, subject, key.getPublic().getEncoded());
        Signature signer = Signature.getInstance("SHA256withECDSA");
        signer.initSign(key.getPrivate());
        signer.update(tbs);
        byte[] signature = signer.sign();
        byte[] bitString = new byte[signature.length + 1];
        System.arraycopy(signature, 0, bitString, 1, signature.length);
        byte[] der = sequence(tbs, ECDSA_WITH_SHA256, tlv(0x03, bitString));
        return Certificates.read(der).get(0);
    }

    static X509Certificate certificate(byte[] subject) throws Exception {
        return certificate(subject, true);
    }

    static String pem(X509Certificate certificate) throws Exception {
        return "-----BEGIN CERTIFICATE-----\n" + Base64.getMimeEncoder(64, new byte[] {'\n'}).encodeToString(certificate.getEncoded())
                + "\n-----END CERTIFICATE-----\n";
    }
}
