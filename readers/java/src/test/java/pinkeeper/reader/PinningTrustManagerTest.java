package pinkeeper.reader;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import javax.net.ssl.HttpsURLConnection;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocket;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The trust manager against real TLS servers on loopback, through the JDK's two HTTP clients:
 * pins are checked on top of chain and host name verification, against the verified path.
 */
class PinningTrustManagerTest {
    @TempDir
    static Path directory;

    static TestPki.Issued root;
    static TestPki.Issued intermediate;
    static TestPki.Issued pinned;
    static TestPki.Issued unpinned;
    static TestPki.Issued wrongName;
    static TestPki.Issued underIntermediate;
    static TestPki.Issued selfSigned;
    static Path cacheDirectory;

    @BeforeAll
    static void makeCertificatesAndStores() throws Exception {
        Path pki = java.nio.file.Files.createDirectory(directory.resolve("pki"));
        TestPki maker = new TestPki(pki);
        root = maker.selfSigned("root", "pinkeeper test root", "root");
        intermediate = maker.issue("intermediate", "pinkeeper test intermediate", "intermediate", root);
        pinned = maker.issue("pinned", "localhost", "leaf", root);
        unpinned = maker.issue("unpinned", "localhost", "leaf", root);
        wrongName = maker.issue("wrongname", "localhost", "wrongname", root);
        underIntermediate = maker.issue("chained", "localhost", "leaf", intermediate);
        selfSigned = maker.selfSigned("selfsigned", "localhost", "selfsigned");

        cacheDirectory = java.nio.file.Files.createDirectory(directory.resolve("cache"));
        // The leaf store pins, under the leaf's CN, certificates that other checks must still reject.
        TestCaches.publish(cacheDirectory, "leaf", TestCaches.cache("leaf", "",
                TestCaches.entry("localhost", pinned.fingerprintBase64()),
                TestCaches.entry("localhost", wrongName.fingerprintBase64()),
                TestCaches.entry("localhost", selfSigned.fingerprintBase64())));
        TestCaches.publish(cacheDirectory, "chain", TestCaches.cache("chain", "",
                TestCaches.entry("localhost", intermediate.fingerprintBase64(), TestCaches.FAR_FUTURE, 1)));
        TestCaches.publish(cacheDirectory, "other", TestCaches.cache("other", "",
                TestCaches.entry("api.example.com", pinned.fingerprintBase64())));
    }

    /** A TLS context trusting only the test root, pinned with {@code store}. */
    static SSLContext context(String store) throws Exception {
        CacheReader pins = CacheReader.forStore(store, cacheDirectory, null, null);
        return PinningTrustManager.withTrustStore(pins, TestPki.trustStore(root.certificate())).sslContext();
    }

    static String getWithUrlConnection(SSLContext context, String host, int port) throws IOException {
        HttpsURLConnection connection = (HttpsURLConnection) URI.create("https://" + host + ":" + port + "/").toURL().openConnection();
        connection.setSSLSocketFactory(context.getSocketFactory());
        connection.setConnectTimeout(10_000);
        connection.setReadTimeout(10_000);
        try (InputStream body = connection.getInputStream()) {
            return new String(body.readAllBytes(), StandardCharsets.US_ASCII);
        }
    }

    static String getWithHttpClient(SSLContext context, String host, int port) throws IOException, InterruptedException {
        HttpClient client = HttpClient.newBuilder().sslContext(context).connectTimeout(Duration.ofSeconds(10)).build();
        HttpRequest request = HttpRequest.newBuilder(URI.create("https://" + host + ":" + port + "/")).timeout(Duration.ofSeconds(10)).build();
        return client.send(request, HttpResponse.BodyHandlers.ofString()).body();
    }

    /** Every message along the cause chain, so assertions can tell the platform's refusal from the pins'. */
    static String messages(Throwable error) {
        List<String> parts = new ArrayList<>();
        for (Throwable cause = error; cause != null; cause = cause.getCause()) parts.add(String.valueOf(cause.getMessage()));
        return String.join(" <- ", parts);
    }

    static void assertBothClientsRejected(SSLContext context, int port, String expected) {
        IOException viaConnection = assertThrows(IOException.class, () -> getWithUrlConnection(context, "localhost", port));
        assertTrue(messages(viaConnection).contains(expected), messages(viaConnection));
        IOException viaClient = assertThrows(IOException.class, () -> getWithHttpClient(context, "localhost", port));
        assertTrue(messages(viaClient).contains(expected), messages(viaClient));
    }

    @Test
    void aPinnedLeafIsAcceptedByBothClients() throws Exception {
        try (TlsServer server = new TlsServer(pinned, pinned.certificate())) {
            SSLContext context = context("leaf");
            assertEquals(TlsServer.BODY, getWithUrlConnection(context, "localhost", server.port()));
            assertEquals(TlsServer.BODY, getWithHttpClient(context, "localhost", server.port()));
            assertEquals(TlsServer.BODY, getWithHttpClient(context, "127.0.0.1", server.port()));
        }
    }

    @Test
    void anUnpinnedLeafOfTheTrustedAuthorityIsRejected() throws Exception {
        try (TlsServer server = new TlsServer(unpinned, unpinned.certificate())) {
            assertBothClientsRejected(context("leaf"), server.port(), "pinkeeper: store 'leaf' does not pin");
        }
    }

    @Test
    void aPinnedLeafForAnotherHostNameIsRejectedByHostNameVerification() throws Exception {
        try (TlsServer server = new TlsServer(wrongName, wrongName.certificate())) {
            // The pin matches (same CN, pinned fingerprint): only the platform's host name check can refuse it.
            assertBothClientsRejected(context("leaf"), server.port(), "No subject alternative DNS name matching localhost");
        }
    }

    @Test
    void aRawSocketAskingForHttpsEndpointIdentificationGetsTheHostNameChecked() throws Exception {
        try (TlsServer server = new TlsServer(wrongName, wrongName.certificate());
             SSLSocket socket = (SSLSocket) context("leaf").getSocketFactory().createSocket("localhost", server.port())) {
            SSLParameters parameters = socket.getSSLParameters();
            parameters.setEndpointIdentificationAlgorithm("HTTPS");
            socket.setSSLParameters(parameters);
            socket.setSoTimeout(10_000);
            IOException error = assertThrows(IOException.class, socket::startHandshake);
            assertTrue(messages(error).contains("No subject alternative DNS name matching localhost"), messages(error));
        }
    }

    @Test
    void aPinnedSelfSignedLeafIsRejectedByChainVerification() throws Exception {
        try (TlsServer server = new TlsServer(selfSigned, selfSigned.certificate())) {
            assertBothClientsRejected(context("leaf"), server.port(), "PKIX path building failed");
        }
    }

    @Test
    void anIntermediatePinnedAtDepthOneIsMatchedInTheVerifiedPath() throws Exception {
        try (TlsServer server = new TlsServer(underIntermediate, underIntermediate.certificate(), intermediate.certificate())) {
            SSLContext context = context("chain");
            assertEquals(TlsServer.BODY, getWithUrlConnection(context, "localhost", server.port()));
            assertEquals(TlsServer.BODY, getWithHttpClient(context, "localhost", server.port()));
        }
    }

    @Test
    void aPinnedIntermediateAppendedByTheServerOutsideTheVerifiedPathDoesNotMatch() throws Exception {
        // Presented: [leaf issued by the root, the pinned intermediate]. Verified: [leaf, root].
        // A reader indexing the presented array would find the pin at depth 1 and say trusted.
        try (TlsServer server = new TlsServer(unpinned, unpinned.certificate(), intermediate.certificate())) {
            assertBothClientsRejected(context("chain"), server.port(), "pinkeeper: store 'chain' does not pin");
        }
    }

    @Test
    void aStoreWithoutPinsForTheNameRejectsAsEmpty() throws Exception {
        try (TlsServer server = new TlsServer(pinned, pinned.certificate())) {
            assertBothClientsRejected(context("other"), server.port(), "has no valid pin for 'localhost' (empty)");
        }
    }

    @Test
    void aStoreWhoseFileIsMissingRejectsAsEmpty() throws Exception {
        try (TlsServer server = new TlsServer(pinned, pinned.certificate())) {
            assertBothClientsRejected(context("notyet"), server.port(), "has no valid pin for 'localhost' (empty)");
        }
    }
}
