package pinkeeper.reader;

import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsServer;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.net.Socket;
import java.security.Principal;
import java.security.PrivateKey;
import java.security.cert.X509Certificate;
import javax.net.ssl.KeyManager;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.X509ExtendedKeyManager;

/** An HTTPS server on 127.0.0.1 or ::1 (an ephemeral port) that sends a chosen certificate chain and answers "hello". */
final class TlsServer implements AutoCloseable {
    static final String BODY = "hello";

    private final HttpsServer server;
    private final java.util.concurrent.atomic.AtomicInteger requests = new java.util.concurrent.atomic.AtomicInteger();

    /** Serves with {@code leaf}'s key and sends {@code chain} (leaf first) as its certificates. */
    TlsServer(TestPki.Issued leaf, X509Certificate... chain) throws Exception {
        this(InetAddress.getLoopbackAddress(), leaf, chain);
    }

    /** The same on {@code address} (127.0.0.1 or ::1). */
    TlsServer(InetAddress address, TestPki.Issued leaf, X509Certificate... chain) throws Exception {
        SSLContext context = SSLContext.getInstance("TLS");
        context.init(new KeyManager[] {new FixedChain(leaf.key(), chain)}, null, null);
        server = HttpsServer.create(new InetSocketAddress(address, 0), 0);
        server.setHttpsConfigurator(new HttpsConfigurator(context));
        server.createContext("/", exchange -> {
            requests.incrementAndGet();
            byte[] body = BODY.getBytes(StandardCharsets.US_ASCII);
            exchange.sendResponseHeaders(200, body.length);
            exchange.getResponseBody().write(body);
            exchange.close();
        });
        server.start();
    }

    int port() { return server.getAddress().getPort(); }

    /** How many requests reached the application: none when every handshake failed. */
    int requests() { return requests.get(); }

    @Override
    public void close() {
        server.stop(0);
    }

    /**
     * Sends exactly the given certificates, whatever they are: key stores refuse a chain whose
     * members do not certify each other, and a hostile server is not bound by that.
     */
    private static final class FixedChain extends X509ExtendedKeyManager {
        private final PrivateKey key;
        private final X509Certificate[] chain;

        FixedChain(PrivateKey key, X509Certificate[] chain) {
            this.key = key;
            this.chain = chain.clone();
        }

        @Override public String chooseEngineServerAlias(String keyType, Principal[] issuers, SSLEngine engine) { return "server"; }
        @Override public String chooseServerAlias(String keyType, Principal[] issuers, Socket socket) { return "server"; }
        @Override public String[] getServerAliases(String keyType, Principal[] issuers) { return new String[] {"server"}; }
        @Override public X509Certificate[] getCertificateChain(String alias) { return chain.clone(); }
        @Override public PrivateKey getPrivateKey(String alias) { return key; }
        @Override public String[] getClientAliases(String keyType, Principal[] issuers) { return null; }
        @Override public String chooseClientAlias(String[] keyType, Principal[] issuers, Socket socket) { return null; }
    }
}
