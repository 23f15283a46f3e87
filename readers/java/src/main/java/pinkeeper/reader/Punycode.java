package pinkeeper.reader;

/**
 * RFC 3492 Punycode encoding of one label, exactly as given: no IDNA mapping, normalisation or
 * case folding (the caller lowers the ASCII letters first), so a label keeps every scalar it was
 * written with.
 */
final class Punycode {
    private static final int BASE = 36;
    private static final int T_MIN = 1;
    private static final int T_MAX = 26;
    private static final int SKEW = 38;
    private static final int DAMP = 700;
    private static final int INITIAL_BIAS = 72;
    private static final int INITIAL_N = 128;
    private static final long MAX_INT = Integer.MAX_VALUE;

    private Punycode() {}

    /** The encoding of {@code label} (without the {@code xn--} prefix), or null on overflow. */
    static String encode(String label) {
        int[] input = label.codePoints().toArray();
        StringBuilder output = new StringBuilder(input.length + 8);
        for (int scalar : input) {
            if (scalar < 0x80) output.append((char) scalar);
        }
        int basic = output.length();
        int handled = basic;
        if (basic > 0) output.append('-');
        long n = INITIAL_N;
        long delta = 0;
        int bias = INITIAL_BIAS;
        while (handled < input.length) {
            long next = Long.MAX_VALUE;
            for (int scalar : input) {
                if (scalar >= n && scalar < next) next = scalar;
            }
            delta += (next - n) * (handled + 1);
            if (delta > MAX_INT) return null;
            n = next;
            for (int scalar : input) {
                if (scalar < n && ++delta > MAX_INT) return null;
                if (scalar != n) continue;
                long q = delta;
                for (int k = BASE; ; k += BASE) {
                    int t = k <= bias ? T_MIN : Math.min(k - bias, T_MAX);
                    if (q < t) break;
                    output.append(digit((int) (t + (q - t) % (BASE - t))));
                    q = (q - t) / (BASE - t);
                }
                output.append(digit((int) q));
                bias = adapt(delta, handled + 1, handled == basic);
                delta = 0;
                handled++;
            }
            delta++;
            n++;
        }
        return output.toString();
    }

    private static int adapt(long delta, int points, boolean first) {
        delta = first ? delta / DAMP : delta / 2;
        delta += delta / points;
        int k = 0;
        while (delta > ((BASE - T_MIN) * T_MAX) / 2) {
            delta /= BASE - T_MIN;
            k += BASE;
        }
        return (int) (k + (BASE - T_MIN + 1) * delta / (delta + SKEW));
    }

    private static char digit(int value) {
        return (char) (value < 26 ? 'a' + value : '0' + value - 26);
    }
}
