package pinkeeper.reader;

/**
 * Why a list or cache document could not be read, in words that point at the offending field,
 * with the error code it is reported under: {@link CacheReaderException.Code#NOT_JSON},
 * {@link CacheReaderException.Code#INVALID_CONTENT} (the default),
 * {@link CacheReaderException.Code#MISSING_METADATA} or {@link CacheReaderException.Code#UNSUPPORTED_FORMAT}.
 */
public final class PinListException extends Exception {
    private static final long serialVersionUID = 1L;

    private final CacheReaderException.Code code;

    /** Content that is JSON but not a valid list or cache file. */
    public PinListException(String reason) {
        this(CacheReaderException.Code.INVALID_CONTENT, reason);
    }

    public PinListException(CacheReaderException.Code code, String reason) {
        super(reason);
        this.code = code;
    }

    public CacheReaderException.Code code() { return code; }

    public String reason() { return getMessage(); }
}
