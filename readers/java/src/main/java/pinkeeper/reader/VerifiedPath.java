package pinkeeper.reader;

import java.security.GeneralSecurityException;
import java.security.cert.CertPathBuilder;
import java.security.cert.CertStore;
import java.security.cert.CertificateException;
import java.security.cert.CollectionCertStoreParameters;
import java.security.cert.PKIXBuilderParameters;
import java.security.cert.PKIXCertPathBuilderResult;
import java.security.cert.TrustAnchor;
import java.security.cert.X509CertSelector;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * Builds the certification path the pins are checked against: PKIX from the leaf to one of the
 * trust anchors, using the presented certificates only as candidate intermediates. Whatever else
 * a server sends (extra, unrelated or out-of-order certificates) never gets a depth.
 */
final class VerifiedPath {
    private final Set<TrustAnchor> anchors;
    private final Set<X509Certificate> anchorCertificates;

    VerifiedPath(X509Certificate[] trusted) {
        anchorCertificates = new HashSet<>(Arrays.asList(trusted));
        anchors = new HashSet<>();
        for (X509Certificate certificate : trusted) anchors.add(new TrustAnchor(certificate, null));
    }

    /** The verified chain, leaf first, ending with the trust anchor's certificate. */
    List<X509Certificate> build(X509Certificate[] presented) throws CertificateException {
        if (presented == null || presented.length == 0) throw new CertificateException("pinkeeper: the server sent no certificate");
        X509Certificate leaf = presented[0];
        // A trusted certificate used directly as the server's: the path is that certificate alone.
        if (anchorCertificates.contains(leaf)) return List.of(leaf);
        if (anchors.isEmpty()) throw new CertificateException("pinkeeper: the platform trust manager trusts no certificate authority");
        try {
            X509CertSelector target = new X509CertSelector();
            target.setCertificate(leaf);
            PKIXBuilderParameters parameters = new PKIXBuilderParameters(anchors, target);
            // Revocation is the platform trust manager's business (it already ran); this only finds the path.
            parameters.setRevocationEnabled(false);
            parameters.addCertStore(CertStore.getInstance("Collection", new CollectionCertStoreParameters(Arrays.asList(presented))));
            PKIXCertPathBuilderResult result = (PKIXCertPathBuilderResult) CertPathBuilder.getInstance("PKIX").build(parameters);
            List<X509Certificate> chain = new ArrayList<>();
            for (var certificate : result.getCertPath().getCertificates()) chain.add((X509Certificate) certificate);
            X509Certificate anchor = result.getTrustAnchor().getTrustedCert();
            if (anchor != null) chain.add(anchor);
            return chain;
        } catch (GeneralSecurityException e) {
            throw new CertificateException("pinkeeper: no verified certification path for the server's certificate: " + e.getMessage(), e);
        }
    }
}
