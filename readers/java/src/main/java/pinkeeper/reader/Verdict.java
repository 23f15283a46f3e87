package pinkeeper.reader;

/**
 * The answer to "may I trust this TLS peer?" with Wultra's semantics. Callers must reject the
 * handshake on both {@link #UNTRUSTED} and {@link #EMPTY}.
 */
public enum Verdict {
    TRUSTED,
    UNTRUSTED,
    /** No live pin exists for the name: reject, and the store needs an update. */
    EMPTY;

    /** The word {@code pinkeeper validate} prints: {@code trusted}, {@code untrusted} or {@code empty}. */
    public String label() {
        return name().toLowerCase(java.util.Locale.ROOT);
    }

    /** The exit status of {@code validate}: 0, 1 or 2. */
    public int exitStatus() {
        return ordinal();
    }
}
