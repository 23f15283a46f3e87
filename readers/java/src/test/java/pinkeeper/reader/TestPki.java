package pinkeeper.reader;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyFactory;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.SecureRandom;
import java.security.cert.X509Certificate;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Throw-away certificates made by the openssl command line at test time, in a directory of their own:
 * a root CA, an intermediate CA under it, and leaves (P-256 keys, valid for two days). Leaves are
 * for {@code localhost} and 127.0.0.1 ({@code leaf}, {@code selfsigned}), for {@code api.example.com}
 * ({@code api}), for the addresses 127.0.0.1 and ::1 alone ({@code loopback}) or for
 * {@code wrong.invalid} ({@code wrongname}), whatever common name they carry.
 */
final class TestPki {
    private static final String CONFIG = """
            [req]
            distinguished_name = dn
            prompt = no
            [dn]
            CN = unused
            [root]
            basicConstraints = critical,CA:TRUE
            keyUsage = critical,keyCertSign,cRLSign
            subjectKeyIdentifier = hash
            [intermediate]
            basicConstraints = critical,CA:TRUE,pathlen:0
            keyUsage = critical,keyCertSign,cRLSign
            subjectKeyIdentifier = hash
            authorityKeyIdentifier = keyid
            [leaf]
            basicConstraints = critical,CA:FALSE
            keyUsage = critical,digitalSignature
            extendedKeyUsage = serverAuth
            subjectKeyIdentifier = hash
            authorityKeyIdentifier = keyid
            subjectAltName = DNS:localhost,IP:127.0.0.1
            [api]
            basicConstraints = critical,CA:FALSE
            keyUsage = critical,digitalSignature
            extendedKeyUsage = serverAuth
            subjectKeyIdentifier = hash
            authorityKeyIdentifier = keyid
            subjectAltName = DNS:api.example.com
            [wrongname]
            basicConstraints = critical,CA:FALSE
            keyUsage = critical,digitalSignature
            extendedKeyUsage = serverAuth
            subjectKeyIdentifier = hash
            authorityKeyIdentifier = keyid
            subjectAltName = DNS:wrong.invalid
            [loopback]
            basicConstraints = critical,CA:FALSE
            keyUsage = critical,digitalSignature
            extendedKeyUsage = serverAuth
            subjectKeyIdentifier = hash
            authorityKeyIdentifier = keyid
            subjectAltName = IP:127.0.0.1,IP:::1
            [selfsigned]
            basicConstraints = critical,CA:FALSE
            keyUsage = critical,digitalSignature
            extendedKeyUsage = serverAuth
            subjectKeyIdentifier = hash
            subjectAltName = DNS:localhost,IP:127.0.0.1
            """;

    /** A certificate with its private key, as files and parsed. */
    record Issued(String name, Path certificateFile, Path keyFile, X509Certificate certificate, PrivateKey key) {
        String fingerprintBase64() { return Certificates.fingerprintBase64(certificate); }
    }

    private final Path directory;
    private final SecureRandom random = new SecureRandom();

    TestPki(Path directory) throws IOException {
        this.directory = directory;
        Files.writeString(directory.resolve("openssl.cnf"), CONFIG);
    }

    /** A self-signed certificate with the {@code root} or {@code selfsigned} extensions. */
    Issued selfSigned(String file, String commonName, String extensions) throws Exception {
        Path key = newKey(file);
        Path certificate = directory.resolve(file + ".pem");
        openssl("req", "-x509", "-new", "-key", key.toString(), "-subj", "/CN=" + commonName, "-days", "2",
                "-config", "openssl.cnf", "-extensions", extensions, "-set_serial", serial(), "-out", certificate.toString());
        return load(file, certificate, key);
    }

    /**
     * A self-signed certificate (the {@code selfsigned} extensions) whose subject is {@code subject}
     * as {@code openssl req -utf8 -subj} reads it, with the string types {@code stringMask} picks
     * ({@code default}: PrintableString, else T61String, else BMPString; {@code nombstr}: no
     * BMPString; {@code utf8only}) and {@code -multivalue-rdn} when {@code multivalue}.
     */
    Issued selfSignedSubject(String file, String subject, String stringMask, boolean multivalue) throws Exception {
        Path key = newKey(file);
        Path certificate = directory.resolve(file + ".pem");
        Path config = directory.resolve(file + ".cnf");
        Files.writeString(config, CONFIG.replace("[req]\n", "[req]\nstring_mask = " + stringMask + "\n"));
        List<String> command = new java.util.ArrayList<>(List.of("req", "-x509", "-new", "-key", key.toString(), "-utf8", "-subj", subject,
                "-days", "2", "-config", config.toString(), "-extensions", "selfsigned", "-set_serial", serial(),
                "-out", certificate.toString()));
        if (multivalue) command.add("-multivalue-rdn");
        openssl(command.toArray(String[]::new));
        return load(file, certificate, key);
    }

    /** What {@code openssl x509 -in FILE ARGUMENTS} prints (as UTF-8), or null when it fails (it cannot load the certificate). */
    String opensslOutput(Path file, String... arguments) throws Exception {
        List<String> command = new java.util.ArrayList<>(List.of("x509", "-in", file.toString()));
        command.addAll(List.of(arguments));
        return run(command.toArray(String[]::new)) == 0 ? Files.readString(directory.resolve("openssl.log"), StandardCharsets.UTF_8) : null;
    }

    /** A certificate for {@code commonName} signed by {@code issuer}, with the named extension section. */
    Issued issue(String file, String commonName, String extensions, Issued issuer) throws Exception {
        Path key = newKey(file);
        Path request = directory.resolve(file + ".csr");
        Path certificate = directory.resolve(file + ".pem");
        openssl("req", "-new", "-key", key.toString(), "-subj", "/CN=" + commonName, "-config", "openssl.cnf",
                "-out", request.toString());
        openssl("x509", "-req", "-in", request.toString(), "-CA", issuer.certificateFile().toString(),
                "-CAkey", issuer.keyFile().toString(), "-set_serial", serial(), "-days", "2",
                "-extfile", "openssl.cnf", "-extensions", extensions, "-out", certificate.toString());
        return load(file, certificate, key);
    }

    /** A trust store holding {@code anchors} as trusted certificates. */
    static KeyStore trustStore(X509Certificate... anchors) throws Exception {
        KeyStore store = KeyStore.getInstance("PKCS12");
        store.load(null, null);
        for (int index = 0; index < anchors.length; index++) store.setCertificateEntry("anchor" + index, anchors[index]);
        return store;
    }

    private Path newKey(String file) throws Exception {
        Path key = directory.resolve(file + ".key");
        openssl("genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", key.toString());
        return key;
    }

    private String serial() {
        return Long.toString(1 + (random.nextLong() >>> 2));
    }

    private Issued load(String name, Path certificate, Path key) throws Exception {
        X509Certificate parsed = Certificates.read(Files.readAllBytes(certificate)).get(0);
        String pem = Files.readString(key, StandardCharsets.US_ASCII)
                .replace("-----BEGIN PRIVATE KEY-----", "").replace("-----END PRIVATE KEY-----", "");
        PrivateKey privateKey = KeyFactory.getInstance("EC").generatePrivate(new PKCS8EncodedKeySpec(Base64.getMimeDecoder().decode(pem)));
        return new Issued(name, certificate, key, parsed, privateKey);
    }

    private void openssl(String... arguments) throws Exception {
        if (run(arguments) != 0) {
            throw new IllegalStateException("openssl failed: openssl " + String.join(" ", arguments) + "\n"
                    + Files.readString(directory.resolve("openssl.log")));
        }
    }

    /** Runs openssl with its output and errors in openssl.log; its exit status (-1 when it took more than a minute). */
    private int run(String... arguments) throws Exception {
        List<String> command = new java.util.ArrayList<>(List.of("openssl"));
        command.addAll(List.of(arguments));
        Process process = new ProcessBuilder(command).directory(directory.toFile())
                .redirectErrorStream(true).redirectOutput(directory.resolve("openssl.log").toFile()).start();
        if (!process.waitFor(60, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            return -1;
        }
        return process.exitValue();
    }
}
