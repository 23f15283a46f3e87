package pinkeeper.reader;

import java.net.Socket;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.CertificateException;
import java.security.cert.X509Certificate;
import java.util.List;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.TrustManager;
import javax.net.ssl.TrustManagerFactory;
import javax.net.ssl.X509ExtendedTrustManager;

/**
 * A server trust manager that adds pinning on top of the platform's verification, never instead
 * of it. For each server certificate chain:
 * <ol>
 *   <li>the platform trust manager checks it as usual: the chain up to a trusted authority and,
 *       when the socket's or engine's {@code SSLParameters} ask for endpoint identification
 *       {@code "HTTPS"} (HttpsURLConnection and java.net.http.HttpClient do), the host name;</li>
 *   <li>PKIX builds the verified certification path from the leaf to one of the platform's trust
 *       anchors (the certificates the server sent serve only as candidates);</li>
 *   <li>the leaf's most specific common name and that path, leaf first, go to the
 *       {@link CacheReader}: anything but {@link Verdict#TRUSTED} fails the handshake.</li>
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
        platform.checkServerTrusted(chain, authType, socket);
        checkPins(chain);
    }

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType, SSLEngine engine) throws CertificateException {
        platform.checkServerTrusted(chain, authType, engine);
        checkPins(chain);
    }

    /** Without a socket or engine there is no host name to check: only the chain and the pins are. */
    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType) throws CertificateException {
        platform.checkServerTrusted(chain, authType);
        checkPins(chain);
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

    /** Runs after the platform accepted {@code presented}; throws unless the pins say trusted. */
    private void checkPins(X509Certificate[] presented) throws CertificateException {
        List<X509Certificate> verified = paths.build(presented);
        String name = Certificates.commonName(verified.get(0));
        if (name == null) {
            throw new CertificateException("pinkeeper: the server's certificate has no common name, and pins are listed by common name");
        }
        String store = pins.store() == null ? pins.path().toString() : "store '" + pins.store() + "'";
        switch (pins.verdictForChain(name, verified)) {
            case TRUSTED:
                return;
            case UNTRUSTED:
                throw new CertificateException("pinkeeper: " + store + " does not pin the certificate chain of '" + name + "' (untrusted)");
            default:
                throw new CertificateException("pinkeeper: " + store + " has no valid pin for '" + name
                        + "' (empty): rejected; the store needs an update");
        }
    }
}
