package pinkeeper.reader;

import java.util.Arrays;
import java.util.Base64;

/**
 * One pinned certificate: the SHA-256 of a certificate's DER bytes, trusted for a name
 * until {@code expires} (Unix seconds). {@code depth} is the certificate's position in the
 * verified chain (0 = leaf, 1 = first intermediate, ...).
 */
public final class Pin {
    private final String name;
    private final String key; // PinName.fold(name), computed once: pins are looked up by it
    private final byte[] fingerprint;
    private final long expires;
    private final long depth;

    public Pin(String name, byte[] fingerprint, long expires, long depth) {
        if (fingerprint.length != 32) {
            throw new IllegalArgumentException("a fingerprint is a 32-byte SHA-256 digest, not " + fingerprint.length + " bytes");
        }
        if (depth < 0) {
            throw new IllegalArgumentException("depth must be 0 (leaf) or more");
        }
        this.name = name;
        this.key = PinName.fold(name);
        this.fingerprint = fingerprint.clone();
        this.expires = expires;
        this.depth = depth;
    }

    public String name() { return name; }

    /** The name as names are compared ({@link PinName#fold}). */
    String key() { return key; }

    /** The raw 32-byte digest (a copy). */
    public byte[] fingerprint() { return fingerprint.clone(); }

    public String fingerprintBase64() { return Base64.getEncoder().encodeToString(fingerprint); }

    public long expires() { return expires; }

    public long depth() { return depth; }

    /** Wultra's rule: an entry is expired once {@code expires} lies strictly in the past. */
    public boolean isExpired(long now) { return expires < now; }

    boolean matches(byte[] digest) { return Arrays.equals(fingerprint, digest); }

    @Override
    public boolean equals(Object other) {
        return other instanceof Pin pin && name.equals(pin.name) && Arrays.equals(fingerprint, pin.fingerprint)
                && expires == pin.expires && depth == pin.depth;
    }

    @Override
    public int hashCode() { return name.hashCode() * 31 + Arrays.hashCode(fingerprint); }

    @Override
    public String toString() {
        return name + " " + fingerprintBase64() + " expires " + expires + (depth == 0 ? "" : " depth " + depth);
    }
}
