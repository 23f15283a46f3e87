package pinkeeper.reader;

import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.net.Proxy;
import java.net.ProxySelector;
import java.net.Socket;
import java.net.URI;
import java.net.URL;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.cert.CertificateException;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import javax.net.ssl.HttpsURLConnection;
import javax.net.ssl.SNIHostName;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocket;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The trust manager against real TLS servers on loopback, through the JDK's two HTTP clients:
 * pins are checked on top of chain and host name verification, against the verified path, by
 * the host the client verified and the leaf's common name (docs/protocol.md, "the host decides"). Only the API that
 * predates §5.1 is used here, so this class also runs against the reader before it (see README).
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
    /** For api.example.com (SAN), with common names their holders chose. */
    static TestPki.Issued attacker;
    static TestPki.Issued exemptCommonName;
    static TestPki.Issued pinnedElsewhereCommonName;
    static TestPki.Issued gateway;
    /** For the addresses 127.0.0.1 and ::1 (SAN), with the unlisted CN unlisted.example. */
    static TestPki.Issued loopbackAttacker;
    static TestPki.Issued loopbackPinned;
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
        attacker = maker.issue("attacker", "unlisted.example", "api", root);
        exemptCommonName = maker.issue("exemptcn", "static.example.com", "api", root);
        pinnedElsewhereCommonName = maker.issue("elsewherecn", "www.example.com", "api", root);
        gateway = maker.issue("gateway", "gw-7.internal.example", "api", root);
        loopbackAttacker = maker.issue("loopbackattacker", "unlisted.example", "loopback", root);
        loopbackPinned = maker.issue("loopbackpinned", "unlisted.example", "loopback", root);

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
        // "Pin only my API": api.example.com requires pinning (to the gateway's certificate),
        // static.example.com and unlisted names do not; www.example.com has pins of its own.
        TestCaches.publish(cacheDirectory, "api", TestCaches.cache("api",
                "  \"domainsConfig\": {\"sslPinningRequiredForUnlisted\": false, \"domains\": ["
                        + "{\"name\": \"api.example.com\", \"sslPinningRequired\": true},"
                        + " {\"name\": \"static.example.com\", \"sslPinningRequired\": false}]},\n",
                TestCaches.entry("api.example.com", gateway.fingerprintBase64()),
                TestCaches.entry("www.example.com", pinned.fingerprintBase64())));
        // "Pin the loopback addresses": 127.0.0.1 and ::1 require pinning, unlisted names do not.
        TestCaches.publish(cacheDirectory, "loopback", TestCaches.cache("loopback",
                "  \"domainsConfig\": {\"sslPinningRequiredForUnlisted\": false, \"domains\": ["
                        + "{\"name\": \"127.0.0.1\", \"sslPinningRequired\": true}, {\"name\": \"::1\", \"sslPinningRequired\": true}]},\n",
                TestCaches.entry("127.0.0.1", loopbackPinned.fingerprintBase64()),
                TestCaches.entry("::1", loopbackPinned.fingerprintBase64())));
    }

    /** A TLS context trusting only the test root, pinned with {@code store}. */
    static SSLContext context(String store) throws Exception {
        CacheReader pins = CacheReader.forStore(store, cacheDirectory, null, null);
        return PinningTrustManager.withTrustStore(pins, TestPki.trustStore(root.certificate())).sslContext();
    }

    static String getWithUrlConnection(SSLContext context, String host, int port) throws IOException {
        return getWithUrlConnection(context, host, port, Proxy.NO_PROXY);
    }

    static String getWithUrlConnection(SSLContext context, String host, int port, Proxy proxy) throws IOException {
        HttpsURLConnection connection = (HttpsURLConnection) URI.create("https://" + host + ":" + port + "/").toURL().openConnection(proxy);
        connection.setSSLSocketFactory(context.getSocketFactory());
        connection.setConnectTimeout(10_000);
        connection.setReadTimeout(10_000);
        try (InputStream body = connection.getInputStream()) {
            return new String(body.readAllBytes(), StandardCharsets.US_ASCII);
        }
    }

    static String getWithHttpClient(SSLContext context, String host, int port) throws IOException, InterruptedException {
        return getWithHttpClient(context, host, port, null);
    }

    /** Through {@code proxy} when not null. */
    static String getWithHttpClient(SSLContext context, String host, int port, TunnelProxy proxy) throws IOException, InterruptedException {
        HttpClient.Builder builder = HttpClient.newBuilder().sslContext(context).connectTimeout(Duration.ofSeconds(10));
        if (proxy != null) builder.proxy(ProxySelector.of(proxy.address()));
        HttpClient client = builder.build();
        HttpRequest request = HttpRequest.newBuilder(URI.create("https://" + host + ":" + port + "/")).timeout(Duration.ofSeconds(10))
                .build();
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

    /**
     * Both clients fetch {@code https://api.example.com:PORT/} from {@code server} through a tunnel; both must fail with
     * {@code expected}.
     */
    static void assertBothClientsRejectedAsApi(SSLContext context, TlsServer server, String expected) throws IOException {
        try (TunnelProxy proxy = new TunnelProxy()) {
            IOException viaConnection = assertThrows(IOException.class,
                    () -> getWithUrlConnection(context, "api.example.com", server.port(), proxy.proxy()));
            assertTrue(messages(viaConnection).contains(expected), messages(viaConnection));
            IOException viaClient = assertThrows(IOException.class,
                    () -> getWithHttpClient(context, "api.example.com", server.port(), proxy));
            assertTrue(messages(viaClient).contains(expected), messages(viaClient));
            assertEquals(List.of("api.example.com:" + server.port(), "api.example.com:" + server.port()), proxy.requested);
        }
    }

    // docs/protocol.md, "the host decides": a certificate correctly issued for api.example.com (its SAN) whose common
    // name its holder chose. The platform verifies the host; the pins must decide by it too.

    @Test
    void theAttackACommonNameThatDomainsConfigLeavesUnpinnedFailsTheHandshake() throws Exception {
        try (TlsServer server = new TlsServer(attacker, attacker.certificate())) {
            assertBothClientsRejectedAsApi(context("api"), server,
                    "pinkeeper: store 'api' does not pin the certificate chain of 'api.example.com'"
                            + " (certificate common name 'unlisted.example')");
        }
    }

    @Test
    void aCommonNameListedAsNotRequiredDoesNotExemptTheHost() throws Exception {
        try (TlsServer server = new TlsServer(exemptCommonName, exemptCommonName.certificate())) {
            assertBothClientsRejectedAsApi(context("api"), server,
                    "does not pin the certificate chain of 'api.example.com' (certificate common name 'static.example.com')");
        }
    }

    @Test
    void aCommonNamePinnedToAnotherCertificateDoesNotMatch() throws Exception {
        try (TlsServer server = new TlsServer(pinnedElsewhereCommonName, pinnedElsewhereCommonName.certificate())) {
            assertBothClientsRejectedAsApi(context("api"), server,
                    "does not pin the certificate chain of 'api.example.com' (certificate common name 'www.example.com')");
        }
    }

    @Test
    void pinsUnderTheHostMatchALeafWhoseCommonNameDiffers() throws Exception {
        try (TlsServer server = new TlsServer(gateway, gateway.certificate()); TunnelProxy proxy = new TunnelProxy()) {
            SSLContext context = context("api");
            assertEquals(TlsServer.BODY, getWithUrlConnection(context, "api.example.com", server.port(), proxy.proxy()));
            assertEquals(TlsServer.BODY, getWithHttpClient(context, "api.example.com", server.port(), proxy));
            assertEquals(TlsServer.BODY, getWithHttpClient(context, "API.Example.COM", server.port(), proxy));
        }
    }

    // The host as the URL spells it. JSSE checks the certificate for the name IDN.toASCII makes of
    // a non-ASCII host (U+3002, U+FF0E and U+FF61 are label separators, fullwidth letters fold to
    // ASCII), while H is the host's one form, which takes a label as written: a host whose one
    // form is not the name the platform verified (or that has none) is refused, pinned or not.

    /** {@code https://HOST:PORT/} through {@code proxy} with HttpsURLConnection; the URL keeps a non-ASCII host as written. */
    static String getSpelledWithUrlConnection(SSLContext context, String host, int port, TunnelProxy proxy) throws IOException {
        HttpsURLConnection connection = (HttpsURLConnection) new URL("https://" + host + ":" + port + "/").openConnection(proxy.proxy());
        connection.setSSLSocketFactory(context.getSocketFactory());
        connection.setConnectTimeout(10_000);
        connection.setReadTimeout(10_000);
        try (InputStream body = connection.getInputStream()) {
            return new String(body.readAllBytes(), StandardCharsets.US_ASCII);
        }
    }

    static final List<String> API_SPELLINGS = List.of(
            "api\u3002example\u3002com",                 // ideographic full stops
            "api\uFF0Eexample\uFF0Ecom",                 // fullwidth full stops
            "api\uFF61example\uFF61com",                 // halfwidth ideographic full stops
            "\uFF41\uFF50\uFF49\u3002example\u3002com",  // fullwidth letters too
            "API\u3002Example\u3002COM",
            "\uFF41\uFF50\uFF49.example.com");           // ASCII dots: SNI is sent, converted

    @Test
    void aHostSpelledWithMappedCharactersIsRefusedPinnedOrNot() throws Exception {
        // The certificates are for api.example.com; domainsConfig pins api.example.com and nothing
        // else, to the gateway's certificate. Judged by the spelling, neither name would need a pin.
        for (TestPki.Issued served : List.of(attacker, gateway)) {
            try (TlsServer server = new TlsServer(served, served.certificate()); TunnelProxy proxy = new TunnelProxy()) {
                SSLContext context = context("api");
                assertAll(API_SPELLINGS.stream().map(host -> () -> {
                    IOException error = assertThrows(IOException.class,
                            () -> getSpelledWithUrlConnection(context, host, server.port(), proxy), host);
                    assertTrue(messages(error).contains("pinkeeper: store 'api' refuses a connection to '" + host + "': "),
                            host + ": " + messages(error));
                }));
            }
        }
    }

    @Test
    void aBareSocketForAHostSpelledWithUnicodeFullStopsIsRefused() throws Exception {
        try (TlsServer server = new TlsServer(gateway, gateway.certificate());
             SSLSocket socket = bareSocket(context("api"), server, "api\u3002example\u3002com", "HTTPS")) {
            IOException error = assertThrows(IOException.class, socket::startHandshake);
            assertTrue(messages(error).contains("refuses a connection to 'api\u3002example\u3002com': the host has no one form"),
                    messages(error));
        }
    }

    // Attack 1: another spelling of a pinned address. JSSE matches an IP literal by its value
    // (0:0:0:0:0:0:0:1 is the SAN's ::1), so a certificate for the address is verified under any
    // spelling; judged as spelled, the host would be a name domainsConfig does not list, and a
    // store that pins only its addresses would let it through unpinned. java.net.http.HttpClient
    // even hands its engine an IPv6 host in InetAddress's long form: before the one form,
    // https://[::1]/ through it was judged as the unlisted 0:0:0:0:0:0:0:1 (that handshake, and
    // each bare-socket one below but for ::1 and 127.0.0.1, completed on the reader before it).

    static final List<String> IPV6_SPELLINGS = List.of("0:0:0:0:0:0:0:1", "::0:1", "0000::1", "0:0::1", "[0:0:0:0:0:0:0:1]", "::1");
    /**
     * Spellings of 127.0.0.1 that JDK 17's endpoint identification matches with the SAN's
     * 127.0.0.1 (a handshake for each completed on the reader before the one form); it refuses
     * 0177.0.0.1 (read as 177.0.0.1) and 0x7f.0.0.1 (a DNS name) by itself.
     */
    static final List<String> IPV4_SPELLINGS = List.of("127.1", "127.0.1", "2130706433", "127.000.000.001", "127.0.0.01", "127.0.0.1.");
    /** IPv4-mapped spellings of 127.0.0.1, which JDK 17's endpoint identification matches with the SAN's 127.0.0.1 as well. */
    static final List<String> IPV4_MAPPED_SPELLINGS =
            List.of("::ffff:127.0.0.1", "::FFFF:7f00:1", "[::ffff:127.0.0.1]", "0:0:0:0:0:ffff:7f00:1");

    /** A TLS handshake on a bare socket to {@code address}, for the peer host {@code spelling}, with HTTPS endpoint identification. */
    static IOException handshakeFailure(SSLContext context, TlsServer server, java.net.InetAddress address, String spelling)
            throws IOException {
        Socket plain = new Socket(address, server.port());
        try (SSLSocket socket = (SSLSocket) context.getSocketFactory().createSocket(plain, spelling, server.port(), true)) {
            socket.setSoTimeout(10_000);
            SSLParameters parameters = socket.getSSLParameters();
            parameters.setEndpointIdentificationAlgorithm("HTTPS");
            socket.setSSLParameters(parameters);
            return assertThrows(IOException.class, socket::startHandshake, spelling + " (SSLSocket)");
        }
    }

    @Test
    void attack1AnotherSpellingOfAPinnedIpv6AddressFailsTheHandshake() throws Exception {
        java.net.InetAddress loopback6 = java.net.InetAddress.getByName("::1");
        try (TlsServer server = new TlsServer(loopback6, loopbackAttacker, loopbackAttacker.certificate())) {
            SSLContext context = context("loopback");
            assertAll(IPV6_SPELLINGS.stream().map(spelling -> () -> {
                String expected = "pinkeeper: store 'loopback' does not pin the certificate chain of '::1'"
                        + " (certificate common name 'unlisted.example')";
                IOException bare = handshakeFailure(context, server, loopback6, spelling);
                assertTrue(messages(bare).contains(expected), spelling + ": " + messages(bare));
                String host = spelling.startsWith("[") ? spelling : "[" + spelling + "]";
                IOException viaClient = assertThrows(IOException.class, () -> getWithHttpClient(context, host, server.port()),
                        spelling + " (HttpClient)");
                assertTrue(messages(viaClient).contains(expected), spelling + ": " + messages(viaClient));
                IOException viaConnection = assertThrows(IOException.class, () -> getWithUrlConnection(context, host, server.port()),
                        spelling + " (HttpsURLConnection)");
                assertTrue(messages(viaConnection).contains(expected), spelling + ": " + messages(viaConnection));
            }));
            assertEquals(0, server.requests(), "a request reached the server");
        }
    }

    @Test
    void attack1AnotherSpellingOfAPinnedIpv4AddressFailsTheHandshake() throws Exception {
        java.net.InetAddress loopback4 = java.net.InetAddress.getByName("127.0.0.1");
        try (TlsServer server = new TlsServer(loopback4, loopbackAttacker, loopbackAttacker.certificate())) {
            SSLContext context = context("loopback");
            IOException canonical = handshakeFailure(context, server, loopback4, "127.0.0.1");
            assertTrue(messages(canonical).contains("does not pin the certificate chain of '127.0.0.1'"), messages(canonical));
            // An IPv4-mapped address is matched as the IPv4 address, whose one form is another name.
            List<String> spellings = new ArrayList<>(IPV4_SPELLINGS);
            spellings.addAll(IPV4_MAPPED_SPELLINGS);
            assertAll(spellings.stream().map(spelling -> () -> {
                String why = IPV4_SPELLINGS.contains(spelling) ? "the host has no one form"
                        : "the platform verifies the certificate for '127.0.0.1', another name than the host's one form '::ffff:127.0.0.1'";
                IOException error = handshakeFailure(context, server, loopback4, spelling);
                assertTrue(messages(error).contains("pinkeeper: store 'loopback' refuses a connection to '" + spelling + "': " + why),
                        spelling + ": " + messages(error));
            }));
            assertEquals(0, server.requests(), "a request reached the server");
        }
    }

    @Test
    void thePinnedCertificateIsTrustedUnderEverySpellingOfItsAddress() throws Exception {
        java.net.InetAddress loopback6 = java.net.InetAddress.getByName("::1");
        try (TlsServer server = new TlsServer(loopback6, loopbackPinned, loopbackPinned.certificate())) {
            SSLContext context = context("loopback");
            for (String spelling : IPV6_SPELLINGS) {
                String host = spelling.startsWith("[") ? spelling : "[" + spelling + "]";
                assertEquals(TlsServer.BODY, getWithHttpClient(context, host, server.port()), spelling);
                assertEquals(TlsServer.BODY, getWithUrlConnection(context, host, server.port()), spelling);
            }
        }
    }

    // Part 2 of §5.1: no connection is checked without a verified host name.

    /** A bare TLS socket to the server on loopback for {@code host}, with endpoint identification when given. */
    static SSLSocket bareSocket(SSLContext context, TlsServer server, String host, String identification) throws IOException {
        Socket plain = new Socket(java.net.InetAddress.getLoopbackAddress(), server.port());
        SSLSocket socket = (SSLSocket) context.getSocketFactory().createSocket(plain, host, server.port(), true);
        socket.setSoTimeout(10_000);
        if (identification != null) {
            SSLParameters parameters = socket.getSSLParameters();
            parameters.setEndpointIdentificationAlgorithm(identification);
            socket.setSSLParameters(parameters);
        }
        return socket;
    }

    @Test
    void aBareSocketWithoutEndpointIdentificationIsRefused() throws Exception {
        // Pinned, for localhost: it would pass with the host name checked.
        try (TlsServer server = new TlsServer(pinned, pinned.certificate());
             SSLSocket socket = bareSocket(context("leaf"), server, "localhost", null)) {
            IOException error = assertThrows(IOException.class, socket::startHandshake);
            assertTrue(messages(error).contains("pinkeeper: store 'leaf' refuses a connection to 'localhost'"
                    + " whose host name is not verified"),
                    messages(error));
        }
    }

    @Test
    void aPinnedCertificateServedForAnotherHostIsRefusedOnABareSocket() throws Exception {
        // The certificate is pinned (under its CN, localhost), but the client connects to api.example.com.
        try (TlsServer server = new TlsServer(pinned, pinned.certificate())) {
            try (SSLSocket socket = bareSocket(context("leaf"), server, "api.example.com", null)) {
                IOException error = assertThrows(IOException.class, socket::startHandshake);
                assertTrue(messages(error).contains("refuses a connection to 'api.example.com' whose host name is not verified"),
                        messages(error));
            }
            try (SSLSocket socket = bareSocket(context("leaf"), server, "api.example.com", "HTTPS")) {
                IOException error = assertThrows(IOException.class, socket::startHandshake);
                assertTrue(messages(error).contains("No subject alternative DNS name matching api.example.com"), messages(error));
            }
        }
    }

    @Test
    void aSocketWhoseSniNameIsNotItsPeerHostIsRefused() throws Exception {
        // The platform tries the SNI name, then the peer host: which one it verified cannot be told.
        try (TlsServer server = new TlsServer(pinned, pinned.certificate());
             SSLSocket socket = bareSocket(context("leaf"), server, "localhost", "HTTPS")) {
            SSLParameters parameters = socket.getSSLParameters();
            parameters.setServerNames(List.of(new SNIHostName("api.example.com")));
            socket.setSSLParameters(parameters);
            IOException error = assertThrows(IOException.class, socket::startHandshake);
            assertTrue(messages(error).contains("refuses a connection to 'localhost' that asks for SNI name 'api.example.com'"),
                    messages(error));
        }
    }

    @Test
    void anHttpsUrlConnectionWithItsOwnHostnameVerifierIsRefused() throws Exception {
        // The JDK turns endpoint identification off for a HostnameVerifier of the application's.
        try (TlsServer server = new TlsServer(pinned, pinned.certificate())) {
            HttpsURLConnection connection =
                    (HttpsURLConnection) URI.create("https://localhost:" + server.port() + "/").toURL().openConnection();
            connection.setSSLSocketFactory(context("leaf").getSocketFactory());
            connection.setHostnameVerifier((host, session) -> true);
            connection.setConnectTimeout(10_000);
            connection.setReadTimeout(10_000);
            IOException error = assertThrows(IOException.class, connection::getInputStream);
            assertTrue(messages(error).contains("whose host name is not verified"), messages(error));
        }
    }

    @Test
    void theTwoArgumentCheckWithoutAConnectionRefuses() throws Exception {
        CacheReader pins = CacheReader.forStore("leaf", cacheDirectory, null, null);
        PinningTrustManager manager = PinningTrustManager.withTrustStore(pins, TestPki.trustStore(root.certificate()));
        X509Certificate[] chain = {pinned.certificate(), root.certificate()};
        CertificateException error = assertThrows(CertificateException.class, () -> manager.checkServerTrusted(chain, "ECDHE_ECDSA"));
        assertTrue(error.getMessage().contains("no verified host name"), error.getMessage());
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
