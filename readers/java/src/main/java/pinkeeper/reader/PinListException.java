package pinkeeper.reader;

/** Why a list or cache document could not be read, in words that point at the offending field. */
public final class PinListException extends Exception {
    private static final long serialVersionUID = 1L;

    public PinListException(String reason) {
        super(reason);
    }

    public String reason() { return getMessage(); }
}
