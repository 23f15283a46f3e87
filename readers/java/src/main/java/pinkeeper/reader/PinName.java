package pinkeeper.reader;

/**
 * How every pinkeeper reader compares names (docs/protocol.md, "the host decides"): as sequences of Unicode scalars
 * with the ASCII letters A–Z folded to a–z and nothing else changed. Two names are the same name
 * when their folds are equal, so a folded name is also the key pins are indexed under.
 *
 * <p>Not {@code equalsIgnoreCase} or {@code toLowerCase}: Java folds the Kelvin sign U+212A to
 * "k" and the dotless "ı" U+0131 to "I", which DNS never does, and the Swift, Python and Go
 * readers must give the same answers. No normalisation either: "é" and "e" + U+0301 are two names.
 * Equal UTF-16 strings are equal scalar sequences, and no UTF-16 unit of a non-ASCII scalar lies
 * in A–Z, so folding code units is folding scalars.
 */
public final class PinName {
    private PinName() {}

    /** {@code name} with A–Z folded to a–z; the same instance when there is nothing to fold. */
    public static String fold(String name) {
        int index = 0;
        while (index < name.length() && !isUpper(name.charAt(index))) index++;
        if (index == name.length()) return name;
        char[] folded = name.toCharArray();
        for (; index < folded.length; index++) {
            if (isUpper(folded[index])) folded[index] = (char) (folded[index] | 0x20);
        }
        return new String(folded);
    }

    /** Whether {@code a} and {@code b} are the same name. */
    public static boolean same(String a, String b) {
        if (a.length() != b.length()) return false;
        for (int index = 0; index < a.length(); index++) {
            char x = a.charAt(index);
            char y = b.charAt(index);
            if (x != y && (isUpper(x) ? x | 0x20 : x) != (isUpper(y) ? y | 0x20 : y)) return false;
        }
        return true;
    }

    private static boolean isUpper(char c) {
        return c >= 'A' && c <= 'Z';
    }

    /**
     * {@code value} safe in one line of a message or log, as the Swift command's {@code LogText}
     * writes it: a backslash doubled, {@code \n \r \t}, and <code>&#92;u{hex}</code> for the other C0 and C1
     * controls, DEL, the line and paragraph separators and the bidirectional marks and overrides.
     * A name comes from a certificate or a cache file and must not forge or hide text.
     */
    static String escaped(String value) {
        StringBuilder out = null;
        for (int index = 0; index < value.length(); ) {
            int scalar = value.codePointAt(index);
            String escape = escape(scalar);
            if (escape != null && out == null) out = new StringBuilder(value.substring(0, index));
            if (out != null) {
                if (escape != null) out.append(escape);
                else out.appendCodePoint(scalar);
            }
            index += Character.charCount(scalar);
        }
        return out == null ? value : out.toString();
    }

    private static String escape(int scalar) {
        switch (scalar) {
            case '\\': return "\\\\";
            case '\n': return "\\n";
            case '\r': return "\\r";
            case '\t': return "\\t";
            default:
                boolean control = scalar <= 0x1F || (scalar >= 0x7F && scalar <= 0x9F) || scalar == 0x2028 || scalar == 0x2029
                        || scalar == 0x061C || scalar == 0x200E || scalar == 0x200F
                        || (scalar >= 0x202A && scalar <= 0x202E) || (scalar >= 0x2066 && scalar <= 0x2069);
                return control ? "\\u{" + Integer.toHexString(scalar) + "}" : null;
        }
    }
}
