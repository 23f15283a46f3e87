package pinkeeper.reader;

/**
 * Why a cache or fallback file could not be used: a {@link #code()} for programs to act on (the
 * error codes of docs/cache-format.md, the same in every reader), its coarser {@link Kind}
 * ({@link Kind#UNREADABLE}: what sits at the path, its permissions, I/O; {@link Kind#INVALID}: its
 * content), and the path and the reason in one line for people.
 */
public final class CacheReaderException extends Exception {
    private static final long serialVersionUID = 1L;

    public enum Kind {
        UNREADABLE(74), INVALID(65);

        private final int exitStatus;

        Kind(int exitStatus) {
            this.exitStatus = exitStatus;
        }

        /** The exit status of {@code validate} for a file refused this way (sysexits: EX_IOERR, EX_DATAERR). */
        public int exitStatus() { return exitStatus; }
    }

    /** Every reason a file is refused, each with the word every reader reports for it. */
    public enum Code {
        /** The fallback file does not exist (a missing cache file is no error: nothing was published yet). */
        MISSING("missing", Kind.UNREADABLE),
        /** The cache path is a symbolic link, which is never followed. */
        SYMLINK("symlink", Kind.UNREADABLE),
        /** A directory, FIFO, socket or device. */
        NOT_REGULAR_FILE("not-regular-file", Kind.UNREADABLE),
        /** Examining, opening or reading failed (permissions included). */
        IO_ERROR("io-error", Kind.UNREADABLE),
        /** Other users may write the file, or its directory without the sticky bit: they could plant pins. */
        INSECURE_PERMISSIONS("insecure-permissions", Kind.UNREADABLE),
        /** Larger than any cache file can be. */
        TOO_LARGE("too-large", Kind.INVALID),
        NOT_JSON("not-json", Kind.INVALID),
        /** JSON, but not what the format says (a wrong type, a known member twice, a bad fingerprint...). */
        INVALID_CONTENT("invalid-content", Kind.INVALID),
        /** A list without pinkeeper's metadata: not a cache file. */
        MISSING_METADATA("missing-metadata", Kind.INVALID),
        /** A format or mode this version does not read (a newer pinkeeper wrote it). */
        UNSUPPORTED_FORMAT("unsupported-format", Kind.INVALID),
        /** Another store's cache file. */
        WRONG_STORE("wrong-store", Kind.INVALID);

        private final String label;
        private final Kind kind;

        Code(String label, Kind kind) {
            this.label = label;
            this.kind = kind;
        }

        /** The code as written in docs/cache-format.md and printed by {@code validate}, e.g. {@code not-json}. */
        public String label() { return label; }

        public Kind kind() { return kind; }
    }

    private final Code code;
    private final String path;
    private final String reason;

    public CacheReaderException(Code code, String path, String reason) {
        super(path + " " + reason);
        this.code = code;
        this.path = path;
        this.reason = reason;
    }

    /** The error code, e.g. {@code "insecure-permissions"} ({@link Code#label()}). */
    public String code() { return code.label(); }

    public Code errorCode() { return code; }

    public Kind kind() { return code.kind(); }

    public String path() { return path; }

    public String reason() { return reason; }
}
