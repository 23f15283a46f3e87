package pinkeeper.reader;

import java.util.List;

/** The 2026 {@code domainsConfig} object: which common names need pinning at all. */
public record DomainsConfig(boolean sslPinningRequiredForUnlisted, List<Domain> domains) {
    public record Domain(String name, boolean sslPinningRequired) {}

    public DomainsConfig {
        domains = List.copyOf(domains);
    }

    /** Whether a TLS peer presenting {@code commonName} must match a pin: the first listed entry decides. */
    public boolean pinningRequired(String commonName) {
        for (Domain domain : domains) {
            if (domain.name().equals(commonName)) return domain.sslPinningRequired();
        }
        return sslPinningRequiredForUnlisted;
    }
}
