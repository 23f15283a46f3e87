package pinkeeper.reader;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;

/**
 * Certificates for the command-line runs of the table's cases, made by openssl once per test run:
 * a leaf whose subject has a chosen common name (or none) and distinct certificates for the other
 * positions of a chain. The command line is given them with {@code --certificate}, and their
 * fingerprints replace the case's in its files (README: the runner makes the certificates).
 */
final class CaseCertificates {
    private final Path directory;
    private final TestPki pki;
    private final Map<String, TestPki.Issued> made = new HashMap<>();

    CaseCertificates(Path directory) throws IOException {
        this.directory = directory;
        this.pki = new TestPki(directory);
    }

    /** A leaf with {@code commonName} (null: a subject without one, so that H alone is consulted). */
    synchronized TestPki.Issued leaf(String commonName) throws Exception {
        String subject = commonName == null ? "/O=pinkeeper conformance leaf" : "/CN=" + commonName;
        return made(subject);
    }

    /** A certificate for position {@code position} (1 or more) of a chain. */
    synchronized TestPki.Issued atPosition(int position) throws Exception {
        return made("/O=pinkeeper conformance/OU=position " + position);
    }

    private TestPki.Issued made(String subject) throws Exception {
        TestPki.Issued issued = made.get(subject);
        if (issued == null) {
            issued = pki.selfSignedSubject("certificate-" + made.size(), subject, "utf8only", false);
            made.put(subject, issued);
        }
        return issued;
    }

    /** The certificates' PEM files joined, leaf first, as one file for {@code --certificate}. */
    Path chainFile(String name, TestPki.Issued... chain) throws IOException {
        StringBuilder pem = new StringBuilder();
        for (TestPki.Issued certificate : chain) pem.append(Files.readString(certificate.certificateFile()));
        Path file = directory.resolve(name + ".pem");
        Files.writeString(file, pem);
        return file;
    }
}
