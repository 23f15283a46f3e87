package pinkeeper.reader;

import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Function;

/**
 * Decides trust from a set of pins (cached plus fallback) with Wultra's semantics as
 * docs/protocol.md ("the host decides") reads them, by the peer's {@link PeerNames}: H, the host the client
 * verified, and N, the leaf's common name when known. In this order:
 * <ol>
 *   <li>no H (empty): untrusted, whatever N is;</li>
 *   <li>expected common names, when set: untrusted unless H or N is one of them;</li>
 *   <li>{@code domainsConfig}: trusted without pins only when it exempts both H and N;</li>
 *   <li>no pins at all: empty;</li>
 *   <li>every live pin under H or N is compared at its depth: a match is trusted;</li>
 *   <li>otherwise untrusted when some pin was compared, else empty.</li>
 * </ol>
 * Names compare as {@link PinName} does. The methods that take a {@code String} ask about the host alone.
 */
public final class PinValidator {
    private final List<Pin> pins;
    private final Set<String> expectedNames; // folded; null: any name
    private final DomainsConfig domainsConfig;

    /** {@code expectedCommonNames} and {@code domainsConfig} may be null (not configured). */
    public PinValidator(List<Pin> pins, List<String> expectedCommonNames, DomainsConfig domainsConfig) {
        this(folded(expectedCommonNames), pins, domainsConfig);
    }

    private PinValidator(Set<String> foldedExpectedNames, List<Pin> pins, DomainsConfig domainsConfig) {
        this.pins = List.copyOf(pins);
        this.expectedNames = foldedExpectedNames;
        this.domainsConfig = domainsConfig;
    }

    /** With expected names already folded ({@link #folded}): a reader folds its list once, not per question. */
    static PinValidator withFoldedNames(List<Pin> pins, Set<String> foldedExpectedNames, DomainsConfig domainsConfig) {
        return new PinValidator(foldedExpectedNames, pins, domainsConfig);
    }

    /** Checks one certificate fingerprint (raw SHA-256 of its DER) presented at {@code depth}. */
    public Verdict validate(PeerNames names, byte[] fingerprint, long depth, long now) {
        return decide(names, now, pin -> pin.depth() == depth ? pin.matches(fingerprint) : null);
    }

    /** {@link #validate(PeerNames, byte[], long, long)} for the host alone. */
    public Verdict validate(String host, byte[] fingerprint, long depth, long now) {
        return validate(PeerNames.host(host), fingerprint, depth, now);
    }

    /**
     * Checks the SHA-256 digests of a verified chain, leaf first: each pin is compared with the
     * certificate at its depth; pins deeper than the chain are skipped.
     */
    public Verdict validateChain(PeerNames names, List<byte[]> chainDigests, long now) {
        return decide(names, now, pin -> pin.depth() < chainDigests.size()
                ? pin.matches(chainDigests.get((int) pin.depth())) : null);
    }

    /** {@link #validateChain(PeerNames, List, long)} for the host alone. */
    public Verdict validateChain(String host, List<byte[]> chainDigests, long now) {
        return validateChain(PeerNames.host(host), chainDigests, now);
    }

    /** Whether the expected common names (if any) admit H or N; when not, every answer is untrusted. False without H. */
    public boolean admits(PeerNames names) {
        return admits(expectedNames, names.keys());
    }

    /** {@code keys} as {@link PeerNames#keys()} gives them: none (no H) admits nothing. */
    static boolean admits(Set<String> foldedExpectedNames, List<String> keys) {
        if (keys.isEmpty()) return false;
        if (foldedExpectedNames == null) return true;
        for (String key : keys) {
            if (foldedExpectedNames.contains(key)) return true;
        }
        return false;
    }

    /** The folded set of {@code names}, or null for null (no list: any name). */
    static Set<String> folded(Collection<String> names) {
        if (names == null) return null;
        Set<String> folded = new HashSet<>();
        for (String name : names) folded.add(PinName.fold(name));
        return Set.copyOf(folded);
    }

    /** {@code matches} answers null when a pin does not apply to what was presented. */
    private Verdict decide(PeerNames names, long now, Function<Pin, Boolean> matches) {
        // Without the host the client verified, only the name the certificate's holder chose
        // would be left to decide by (docs/protocol.md, "the host decides"): an empty H is refused, whatever N is.
        if (!names.hasHost()) return Verdict.UNTRUSTED;
        List<String> keys = names.keys();
        // The operator's expected names first: nothing the server sends widens them (docs/cache-format.md).
        if (!admits(expectedNames, keys)) return Verdict.UNTRUSTED;
        if (domainsConfig != null && !domainsConfig.pinningRequired(names)) return Verdict.TRUSTED;
        if (pins.isEmpty()) return Verdict.EMPTY;
        int attempts = 0;
        for (Pin pin : pins) {
            if (pin.isExpired(now) || !keys.contains(pin.key())) continue;
            Boolean matched = matches.apply(pin);
            if (matched == null) continue;
            if (matched) return Verdict.TRUSTED;
            attempts++;
        }
        return attempts > 0 ? Verdict.UNTRUSTED : Verdict.EMPTY;
    }
}
