package pinkeeper.reader;

import java.util.List;

/**
 * The two names a TLS peer is judged by (PROTOCOL.md §5.1, "the host decides").
 *
 * @param host H: the host the client connected to and had the platform verify the certificate
 *     for (the URL host, the SNI name). It always takes part. Empty (null is taken as empty)
 *     leaves nothing to decide by: every question then answers {@link Verdict#UNTRUSTED} and
 *     {@code admits} is false, whatever N is.
 * @param commonName N: the leaf certificate's most specific common name when the chain is known,
 *     else null. Its holder chose it, so it can only add pins to compare (and names the operator
 *     expects); it never lifts a pinning requirement that the host has, and is never consulted
 *     alone.
 */
public record PeerNames(String host, String commonName) {
    public PeerNames {
        if (host == null) host = "";
    }

    /** H alone: a question without a certificate chain. */
    public static PeerNames host(String host) {
        return new PeerNames(host, null);
    }

    /** Whether there is an H to decide by; without one every answer is {@link Verdict#UNTRUSTED}. */
    public boolean hasHost() {
        return !host.isEmpty();
    }

    /** The folded names to consult: H, then N unless it is the same name; none without H (never N alone). */
    public List<String> keys() {
        if (!hasHost()) return List.of();
        String host = PinName.fold(this.host);
        if (commonName == null) return List.of(host);
        String common = PinName.fold(commonName);
        return common.equals(host) ? List.of(host) : List.of(host, common);
    }

    /** For messages: {@code 'host'}, or {@code 'host' (certificate common name 'N')} when N is another name; escaped. */
    public String described() {
        String host = "'" + PinName.escaped(this.host) + "'";
        if (commonName == null || PinName.same(this.host, commonName)) return host;
        return host + " (certificate common name '" + PinName.escaped(commonName) + "')";
    }
}
