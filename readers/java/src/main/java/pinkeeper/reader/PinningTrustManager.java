package pinkeeper.reader;

import java.net.IDN;
import java.net.Socket;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.CertificateException;
import java.security.cert.X509Certificate;
import java.util.List;
import javax.net.ssl.ExtendedSSLSession;
import javax.net.ssl.SNIHostName;
import javax.net.ssl.SNIServerName;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSession;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManager;
import javax.net.ssl.TrustManagerFactory;
import javax.net.ssl.X509ExtendedTrustManager;

/**
 * A server trust manager that adds pinning on top of the platform's verification, never instead
 * of it. For each server certificate chain:
 * <ol>
 *   <li>the host H the connection is for: the handshake session's peer host as the platform
 *       reads it ({@code IDN.toASCII}, see {@link #verifiedName}), which is what the
 *       platform verifies the certificate for when the socket's or engine's {@code SSLParameters}
 *       ask for endpoint identification. A connection that asks for none is refused (so is one
 *       whose SNI name is another name than its peer host: which of the two the platform matched
 *       cannot be told), and so is the two-argument {@code checkServerTrusted}, which has no
 *       connection: without a verified host, only the name the certificate chose would be left
 *       to decide by;</li>
 *   <li>the platform trust manager checks the chain up to a trusted authority and the host name;</li>
 *   <li>PKIX builds the verified certification path from the leaf to one of the platform's trust
 *       anchors (the certificates the server sent serve only as candidates);</li>
 *   <li>H, the leaf's most specific common name N and that path, leaf first, go to the
 *       {@link CacheReader} (PROTOCOL.md §5.1): anything but {@link Verdict#TRUSTED} fails the handshake.</li>
 * </ol>
 * Client certificates are checked by the platform trust manager alone.
 */
public final class PinningTrustManager extends X509ExtendedTrustManager {
    private final CacheReader pins;
    private final X509ExtendedTrustManager platform;
    private final VerifiedPath paths;

    /** Pins from {@code pins}, on top of {@code platform} (which must do the full PKIX verification). */
    public PinningTrustManager(CacheReader pins, X509ExtendedTrustManager platform) {
        this.pins = pins;
        this.platform = platform;
        this.paths = new VerifiedPath(platform.getAcceptedIssuers());
    }

    /** On top of the JDK's default trust store (cacerts, or {@code javax.net.ssl.trustStore}). */
    public static PinningTrustManager withDefaultTrust(CacheReader pins) throws GeneralSecurityException {
        return withTrustStore(pins, null);
    }

    /** On top of a PKIX trust manager for {@code trustStore} (null: the JDK's default trust store). */
    public static PinningTrustManager withTrustStore(CacheReader pins, KeyStore trustStore) throws GeneralSecurityException {
        TrustManagerFactory factory = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        factory.init(trustStore);
        for (TrustManager manager : factory.getTrustManagers()) {
            if (manager instanceof X509ExtendedTrustManager extended) return new PinningTrustManager(pins, extended);
        }
        throw new GeneralSecurityException("the platform's " + factory.getAlgorithm() + " trust manager factory has no X509ExtendedTrustManager");
    }

    /** A TLS context whose only trust manager is this one. */
    public SSLContext sslContext() throws GeneralSecurityException {
        SSLContext context = SSLContext.getInstance("TLS");
        context.init(null, new TrustManager[] {this}, null);
        return context;
    }

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType, Socket socket) throws CertificateException {
        SSLSocket tls = socket instanceof SSLSocket ssl ? ssl : null;
        String host = verifiedHost(tls == null ? null : tls.getHandshakeSession(), tls == null ? null : tls.getSSLParameters(), "socket");
        platform.checkServerTrusted(chain, authType, socket);
        checkPins(host, chain);
    }

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType, SSLEngine engine) throws CertificateException {
        String host = verifiedHost(engine == null ? null : engine.getHandshakeSession(), engine == null ? null : engine.getSSLParameters(), "engine");
        platform.checkServerTrusted(chain, authType, engine);
        checkPins(host, chain);
    }

    /**
     * Always refuses: without a socket or engine no host name was verified, and deciding by the
     * certificate's own common name is the bypass PROTOCOL.md §5.1 closes. JSSE never calls this
     * for a trust manager given to {@code SSLContext.init}; other code has to pass the connection.
     */
    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType) throws CertificateException {
        throw new CertificateException("pinkeeper: " + storeName() + " refuses to check a server certificate without its socket or engine:"
                + " there is no verified host name to decide by");
    }

    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType, Socket socket) throws CertificateException {
        platform.checkClientTrusted(chain, authType, socket);
    }

    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType, SSLEngine engine) throws CertificateException {
        platform.checkClientTrusted(chain, authType, engine);
    }

    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType) throws CertificateException {
        platform.checkClientTrusted(chain, authType);
    }

    @Override
    public X509Certificate[] getAcceptedIssuers() {
        return platform.getAcceptedIssuers();
    }

    /**
     * H for this handshake. The platform's endpoint identification checks the certificate for the
     * session's peer host, or for the requested SNI name first when there is one (and for the peer
     * host only if that fails); with both the same name, that name is what was verified. The peer
     * host is taken as the platform reads it ({@link #verifiedName}), never as it is spelled.
     */
    private String verifiedHost(SSLSession session, SSLParameters parameters, String what) throws CertificateException {
        String peerHost = session == null ? null : session.getPeerHost();
        String algorithm = parameters == null ? null : parameters.getEndpointIdentificationAlgorithm();
        if (algorithm == null || algorithm.isEmpty()) {
            throw new CertificateException("pinkeeper: " + storeName() + " refuses a connection" + (peerHost == null ? "" : " to '" + PinName.escaped(peerHost) + "'")
                    + " whose host name is not verified: the " + what + " asks for no endpoint identification"
                    + " (SSLParameters.setEndpointIdentificationAlgorithm(\"HTTPS\"); an HttpsURLConnection with its own HostnameVerifier turns it off)");
        }
        if (peerHost == null || peerHost.isEmpty()) {
            throw new CertificateException("pinkeeper: " + storeName() + " refuses a connection whose " + what + " names no peer host to verify");
        }
        String host = verifiedName(peerHost);
        if (host == null) {
            throw new CertificateException("pinkeeper: " + storeName() + " refuses a connection to '" + PinName.escaped(peerHost)
                    + "': the host is not a valid internationalized domain name (IDN.toASCII refuses it), so there is no verified name to decide by");
        }
        String requested = requestedHostName(session);
        if (requested != null && !PinName.same(requested, host)) {
            throw new CertificateException("pinkeeper: " + storeName() + " refuses a connection to '" + PinName.escaped(peerHost) + "' that asks for SNI name '"
                    + PinName.escaped(requested) + "': the platform may have verified the certificate for either, so there is no one host to decide by");
        }
        return host;
    }

    /**
     * The name the platform verifies the certificate for when the client connects to {@code peerHost};
     * null when there is none.
     *
     * <p>JSSE never matches a host as it is spelled: its host name check (like {@code SNIHostName},
     * which builds the SNI name) converts the host with {@code IDN.toASCII}, which takes U+3002,
     * U+FF0E and U+FF61 for dots and maps fullwidth and other compatibility characters (nameprep:
     * NFKC and case folding). So {@code api\u3002bank\u3002com} is checked as {@code api.bank.com},
     * with no SNI to tell (JSSE sends none for a host without an ASCII dot). Judging pins by the
     * spelling would make it an unlisted name, which {@code domainsConfig} may leave unpinned.
     *
     * <p>The choice: convert rather than refuse non-ASCII hosts. {@code IDN.toASCII(host,
     * USE_STD3_ASCII_RULES)} is the conversion {@code SNIHostName} applies (the STD3 rules only
     * refuse more names, never change one), so H is by construction the name verified, and pins
     * and {@code domainsConfig} apply to every spelling of it. Refusing would buy nothing more and
     * would break clients of internationalized hosts, whose names the certificates and the pin
     * lists carry in their ASCII form ({@code xn--…}) anyway. A host the conversion refuses, or
     * that it makes empty, leaves no verified name: the connection is refused. An all-ASCII host
     * is kept as it is: the conversion leaves ASCII labels unchanged, and its STD3 rules would
     * refuse IPv6 literals such as {@code ::1}, which the platform matches as addresses.
     */
    static String verifiedName(String peerHost) {
        if (peerHost == null || peerHost.isEmpty()) return null;
        if (isAscii(peerHost)) return peerHost;
        String converted;
        try {
            converted = IDN.toASCII(peerHost, IDN.USE_STD3_ASCII_RULES);
        } catch (IllegalArgumentException e) {
            return null;
        }
        return converted.isEmpty() || !isAscii(converted) ? null : converted;
    }

    private static boolean isAscii(String text) {
        for (int index = 0; index < text.length(); index++) {
            if (text.charAt(index) >= 0x80) return false;
        }
        return true;
    }

    /** The host name the client asked for with SNI, or null. */
    private static String requestedHostName(SSLSession session) {
        if (!(session instanceof ExtendedSSLSession extended)) return null;
        for (SNIServerName name : extended.getRequestedServerNames()) {
            if (name instanceof SNIHostName hostName) return hostName.getAsciiName();
        }
        return null;
    }

    /** Runs after the platform accepted {@code presented} for {@code host}; throws unless the pins say trusted. */
    private void checkPins(String host, X509Certificate[] presented) throws CertificateException {
        List<X509Certificate> verified = paths.build(presented);
        PeerNames names = new PeerNames(host, Certificates.commonName(verified.get(0)));
        String store = storeName();
        switch (pins.verdictForChain(names, verified, CacheReader.now())) {
            case TRUSTED:
                return;
            case UNTRUSTED:
                if (!pins.admits(names)) {
                    throw new CertificateException("pinkeeper: " + names.described() + " is not among the expected_common_names of " + store + " (untrusted)");
                }
                throw new CertificateException("pinkeeper: " + store + " does not pin the certificate chain of " + names.described() + " (untrusted)");
            default:
                throw new CertificateException("pinkeeper: " + store + " has no valid pin for " + names.described()
                        + " (empty): rejected; the store needs an update");
        }
    }

    private String storeName() {
        return pins.store() == null ? pins.path().toString() : "store '" + pins.store() + "'";
    }
}
