package pinkeeper.reader;

import java.util.List;
import java.util.Objects;

/**
 * The two names a TLS peer is judged by (docs/protocol.md, "the host decides").
 *
 * <p>H, {@link #host()}: the host the client connected to and had the platform verify the
 * certificate for (the URL host, the SNI name), put in its one form by {@link HostName#canonicalHost}
 * here, the one place every question goes through: {@code 0:0:0:0:0:0:0:1} and {@code ::0:1} are
 * {@code ::1}, {@code API.Example.com.} is {@code api.example.com}, {@code bücher.example} is
 * {@code xn--bcher-kva.example}. It always takes part. An empty host (null is taken as empty) or
 * one that has no one form ({@code 127.1}, {@code fe80::1%eth0}, {@code api。example。com})
 * leaves nothing to decide by: every question then answers {@link Verdict#UNTRUSTED} and
 * {@code admits} is false, whatever N is.
 *
 * <p>N, {@link #commonName()}: the leaf certificate's most specific common name when the chain is
 * known, else null, compared as it is (never put in another form). Its holder chose it, so it can
 * only add pins to compare (and names the operator expects); it never lifts a pinning requirement
 * that the host has, and is never consulted alone.
 */
public final class PeerNames {
    private final String spelledHost;
    private final String host;
    private final String commonName;

    public PeerNames(String host, String commonName) {
        this.spelledHost = host == null ? "" : host;
        String canonical = HostName.canonicalHost(this.spelledHost);
        this.host = canonical == null ? "" : canonical;
        this.commonName = commonName;
    }

    /** H alone: a question without a certificate chain. */
    public static PeerNames host(String host) {
        return new PeerNames(host, null);
    }

    /** H in its one form; empty when the host was empty or refused. */
    public String host() { return host; }

    /** The host as it was handed over. */
    public String spelledHost() { return spelledHost; }

    public String commonName() { return commonName; }

    /** Whether there is an H to decide by; without one every answer is {@link Verdict#UNTRUSTED}. */
    public boolean hasHost() {
        return !host.isEmpty();
    }

    /** Whether a host was handed over that has no one form (and so answers untrusted). */
    public boolean hostRefused() {
        return host.isEmpty() && !spelledHost.isEmpty();
    }

    /** The folded names to consult: H, then N unless it is the same name; none without H (never N alone). */
    public List<String> keys() {
        if (!hasHost()) return List.of();
        if (commonName == null) return List.of(host);
        String common = PinName.fold(commonName);
        return common.equals(host) ? List.of(host) : List.of(host, common);
    }

    /**
     * For messages: {@code 'host'}, or {@code 'host' (certificate common name 'N')} when N is
     * another name; a refused host as spelled, saying so; escaped.
     */
    public String described() {
        String shown = hostRefused() ? "'" + PinName.escaped(spelledHost) + "' (a host spelling with no one form, refused)"
                : "'" + PinName.escaped(host) + "'";
        if (commonName == null || PinName.same(host, commonName)) return shown;
        return shown + " (certificate common name '" + PinName.escaped(commonName) + "')";
    }

    @Override
    public boolean equals(Object other) {
        return other instanceof PeerNames names && spelledHost.equals(names.spelledHost) && Objects.equals(commonName, names.commonName);
    }

    @Override
    public int hashCode() { return Objects.hash(spelledHost, commonName); }

    @Override
    public String toString() { return "PeerNames[host=" + host + ", spelledHost=" + spelledHost + ", commonName=" + commonName + "]"; }
}
