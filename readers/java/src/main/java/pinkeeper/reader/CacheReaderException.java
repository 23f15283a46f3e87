package pinkeeper.reader;

/**
 * Why a cache or fallback file could not be used: {@link Kind#UNREADABLE} (I/O, permissions) or
 * {@link Kind#INVALID} (its content), with the path and the reason in one line.
 */
public final class CacheReaderException extends Exception {
    private static final long serialVersionUID = 1L;

    public enum Kind { UNREADABLE, INVALID }

    private final Kind kind;
    private final String path;
    private final String reason;

    public CacheReaderException(Kind kind, String path, String reason) {
        super(path + " " + reason);
        this.kind = kind;
        this.path = path;
        this.reason = reason;
    }

    public Kind kind() { return kind; }

    public String path() { return path; }

    public String reason() { return reason; }
}
