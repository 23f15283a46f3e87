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
 *   <li>the host H the connection is for: the handshake session's peer host, which is what the
 *       platform verifies the certificate for when the socket's or engine's {@code SSLParameters}
 *       ask for endpoint identification, in its one form ({@link HostName#canonicalHost}). A
 *       connection that asks for none is refused, and so is one whose host has no one form, or
 *       whose one form is not that of the name the platform matches ({@link #platformName}), or
 *       whose SNI name is another name (which of the two the platform matched cannot be told),
 *       and so is the two-argument {@code checkServerTrusted}, which has no connection: without a
 *       verified host, only the name the certificate chose would be left to decide by;</li>
 *   <li>the platform trust manager checks the chain up to a trusted authority and the host name;</li>
 *   <li>PKIX builds the verified certification path from the leaf to one of the platform's trust
 *       anchors (the certificates the server sent serve only as candidates);</li>
 *   <li>H, the leaf's most specific common name N and that path, leaf first, go to the
 *       {@link CacheReader} (docs/protocol.md, "the host decides"): anything but {@link Verdict#TRUSTED} fails the handshake.</li>
 * </ol>
 * Client certificates are checked by the platform trust manager alone.
 */
public final class PinningTrustManager extends X509ExtendedTrustManager {
    /** How the one form of an IPv4-mapped IPv6 address starts (its IPv4 address follows, dotted). */
    private static final String IPV4_MAPPED = "::ffff:";

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
        throw new GeneralSecurityException("the platform's " + factory.getAlgorithm()
                + " trust manager factory has no X509ExtendedTrustManager");
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
        String host = verifiedHost(engine == null ? null : engine.getHandshakeSession(), engine == null ? null : engine.getSSLParameters(),
                "engine");
        platform.checkServerTrusted(chain, authType, engine);
        checkPins(host, chain);
    }

    /**
     * Always refuses: without a socket or engine no host name was verified, and deciding by the
     * certificate's own common name is the bypass docs/protocol.md ("the host decides") closes. JSSE never calls this
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
     * H for this handshake, as handed over (the one form is made by {@link PeerNames}). The
     * platform's endpoint identification checks the certificate for the session's peer host, or
     * for the requested SNI name first when there is one (and for the peer host only if that
     * fails); with both the same name, that name is what was verified. The peer host must have
     * one form ({@link HostName#canonicalHost}), and it must be the one form of the name the
     * platform matches ({@link #platformName}): otherwise the pins would be looked up under
     * another name than the one verified.
     */
    private String verifiedHost(SSLSession session, SSLParameters parameters, String what) throws CertificateException {
        String peerHost = session == null ? null : session.getPeerHost();
        String algorithm = parameters == null ? null : parameters.getEndpointIdentificationAlgorithm();
        if (algorithm == null || algorithm.isEmpty()) {
            throw new CertificateException("pinkeeper: " + storeName() + " refuses a connection"
                    + (peerHost == null ? "" : " to '" + PinName.escaped(peerHost) + "'")
                    + " whose host name is not verified: the " + what + " asks for no endpoint identification"
                    + " (SSLParameters.setEndpointIdentificationAlgorithm(\"HTTPS\"); an HttpsURLConnection with its own HostnameVerifier"
                    + " turns it off)");
        }
        if (peerHost == null || peerHost.isEmpty()) {
            throw new CertificateException("pinkeeper: " + storeName() + " refuses a connection whose " + what
                    + " names no peer host to verify");
        }
        String host = HostName.canonicalHost(peerHost);
        if (host == null) {
            throw new CertificateException("pinkeeper: " + storeName() + " refuses a connection to '" + PinName.escaped(peerHost)
                    + "': the host has no one form (a short or padded IPv4 address, a zone id, an empty label, a dot IDNA maps...),"
                    + " so there is no name to look its pins up by; connect by the host's usual name or address");
        }
        String platform = platformName(peerHost);
        if (!host.equals(HostName.canonicalHost(platform))) {
            throw new CertificateException("pinkeeper: " + storeName() + " refuses a connection to '" + PinName.escaped(peerHost)
                    + "': the platform verifies the certificate for "
                    + (platform == null ? "no name" : "'" + PinName.escaped(platform) + "'") + ", another name than the host's one form '"
                    + PinName.escaped(host) + "'; connect by the name the certificate is verified for");
        }
        String requested = requestedHostName(session);
        if (requested != null && !host.equals(HostName.canonicalHost(requested))) {
            throw new CertificateException("pinkeeper: " + storeName() + " refuses a connection to '" + PinName.escaped(peerHost)
                    + "' that asks for SNI name '" + PinName.escaped(requested)
                    + "': the platform may have verified the certificate for either, so there is no one host to decide by");
        }
        return peerHost;
    }

    /**
     * The name JSSE matches the certificate against for {@code peerHost}, or null when it matches
     * none. Its host name check and {@code SNIHostName} convert a non-ASCII host with
     * {@code IDN.toASCII}, which maps (U+3002 as a dot, fullwidth letters, nameprep's case
     * folding): {@code \uFF41pi.example.com} is checked as {@code api.example.com}, while its one
     * form is an A-label of its own. And it matches an IPv4-mapped IPv6 literal as the IPv4
     * address ({@code InetAddress} makes {@code ::ffff:127.0.0.1} an {@code Inet4Address}), so a
     * certificate for 127.0.0.1 is verified for it, while its one form is {@code ::ffff:127.0.0.1}.
     * This name is only compared with the one form, never used as H, so a host the two read
     * differently is refused. Other ASCII hosts are matched as they are (IPv6 literals by
     * address, which their one form is too).
     */
    static String platformName(String peerHost) {
        if (HostName.isAscii(peerHost)) {
            String host = HostName.canonicalHost(peerHost);
            return host != null && host.startsWith(IPV4_MAPPED) && host.indexOf('.') > 0 ? host.substring(IPV4_MAPPED.length()) : peerHost;
        }
        try {
            return IDN.toASCII(peerHost, IDN.USE_STD3_ASCII_RULES);
        } catch (IllegalArgumentException e) {
            return null;
        }
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
                    throw new CertificateException("pinkeeper: " + names.described() + " is not among the expected_common_names of " + store
                            + " (untrusted)");
                }
                throw new CertificateException("pinkeeper: " + store + " does not pin the certificate chain of " + names.described()
                        + " (untrusted)");
            default:
                throw new CertificateException("pinkeeper: " + store + " has no valid pin for " + names.described()
                        + " (empty): rejected; the store needs an update");
        }
    }

    private String storeName() {
        return pins.store() == null ? pins.path().toString() : "store '" + pins.store() + "'";
    }
}
