package pinkeeper.reader;

import java.util.List;

/**
 * Decides trust from a set of pins (cached plus fallback) with Wultra's semantics, in this order:
 * the expected common names, {@code domainsConfig}, an empty store, then the live pins for the name.
 */
public final class PinValidator {
    private final List<Pin> pins;
    private final List<String> expectedCommonNames;
    private final DomainsConfig domainsConfig;

    /** {@code expectedCommonNames} and {@code domainsConfig} may be null (not configured). */
    public PinValidator(List<Pin> pins, List<String> expectedCommonNames, DomainsConfig domainsConfig) {
        this.pins = List.copyOf(pins);
        this.expectedCommonNames = expectedCommonNames == null ? null : List.copyOf(expectedCommonNames);
        this.domainsConfig = domainsConfig;
    }

    /** Checks one certificate fingerprint (raw SHA-256 of its DER) presented at {@code depth}. */
    public Verdict validate(String commonName, byte[] fingerprint, long depth, long now) {
        return decide(commonName, now, pin -> pin.depth() == depth ? pin.matches(fingerprint) : null);
    }

    /**
     * Checks the SHA-256 digests of a verified chain, leaf first: each pin is compared with the
     * certificate at its depth; pins deeper than the chain are skipped.
     */
    public Verdict validateChain(String commonName, List<byte[]> chainDigests, long now) {
        return decide(commonName, now, pin -> pin.depth() < chainDigests.size()
                ? pin.matches(chainDigests.get((int) pin.depth())) : null);
    }

    /** {@code matches} answers null when a pin does not apply to what was presented. */
    private Verdict decide(String commonName, long now, java.util.function.Function<Pin, Boolean> matches) {
        // The operator's expected names first: nothing the server sends widens them (docs/cache-format.md).
        if (expectedCommonNames != null && !expectedCommonNames.contains(commonName)) return Verdict.UNTRUSTED;
        if (domainsConfig != null && !domainsConfig.pinningRequired(commonName)) return Verdict.TRUSTED;
        if (pins.isEmpty()) return Verdict.EMPTY;
        int attempts = 0;
        for (Pin pin : pins) {
            if (!pin.name().equals(commonName) || pin.isExpired(now)) continue;
            Boolean matched = matches.apply(pin);
            if (matched == null) continue;
            if (matched) return Verdict.TRUSTED;
            attempts++;
        }
        return attempts > 0 ? Verdict.UNTRUSTED : Verdict.EMPTY;
    }
}
