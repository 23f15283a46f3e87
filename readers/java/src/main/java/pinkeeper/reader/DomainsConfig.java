package pinkeeper.reader;

import java.util.List;

/** The 2026 {@code domainsConfig} object: which names need pinning at all (compared as {@link PinName}s). */
public record DomainsConfig(boolean sslPinningRequiredForUnlisted, List<Domain> domains) {
    public record Domain(String name, boolean sslPinningRequired) {}

    public DomainsConfig {
        domains = List.copyOf(domains);
    }

    /** Whether a peer known by {@code name} must match a pin: the first entry listing the name decides. */
    public boolean pinningRequired(String name) {
        for (Domain domain : domains) {
            if (PinName.same(domain.name(), name)) return domain.sslPinningRequired();
        }
        return sslPinningRequiredForUnlisted;
    }

    /**
     * Whether the peer must match a pin: unless the list exempts every one of its names. The
     * certificate's own common name never lifts a requirement the host has (docs/protocol.md, "the host decides"),
     * and without a host nothing is exempt.
     */
    public boolean pinningRequired(PeerNames names) {
        if (!names.hasHost() || pinningRequired(names.host())) return true;
        return names.commonName() != null && pinningRequired(names.commonName());
    }
}
