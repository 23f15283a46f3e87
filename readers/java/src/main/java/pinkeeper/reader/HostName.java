package pinkeeper.reader;

/**
 * The one form of a host a client hands over (docs/protocol.md, "H in one spelling"): every
 * pinkeeper reader puts H in this form before it looks anything up, so that no other spelling of
 * an address or a name (which the TLS stack may well accept for the same certificate) can reach
 * a {@code domainsConfig} entry or a pin that the canonical spelling would not.
 *
 * <p>Written here rather than taken from the JDK: {@code InetAddress} resolves names and accepts
 * short, octal-looking and zone-id forms, and its {@code getHostAddress()} writes IPv6 in the long
 * form ({@code 0:0:0:0:0:0:0:1}); {@code java.net.IDN} maps (nameprep: NFKC, case folding,
 * U+3002 as a dot), while a reader must take a label as written.
 */
public final class HostName {
    private HostName() {}

    /**
     * {@code name} in its one form, or null when it is refused: IP literals as their canonical
     * text (IPv6 per RFC 5952, {@code ::ffff:a.b.c.d} for IPv4-mapped), a DNS name without one
     * trailing dot, ASCII letters in lower case and each label holding other characters as its
     * Punycode A-label. Empty names, zone ids, short, padded, octal or hex IPv4 forms, empty labels
     * and the dots IDNA maps (U+3002, U+FF0E, U+FF61) are refused.
     */
    public static String canonicalHost(String name) {
        if (name == null || name.isEmpty()) return null;
        if (name.charAt(0) == '[') {
            if (name.length() < 2 || name.charAt(name.length() - 1) != ']') return null;
            return ipv6(name.substring(1, name.length() - 1));
        }
        if (name.indexOf(':') >= 0) return ipv6(name);
        if (isIpv4Shaped(name)) return ipv4(name) == null ? null : name;
        return dnsName(name);
    }

    /** Whether {@code name} is to be read as an IPv4 literal: its last label all digits or hex-prefixed, or only digits and dots. */
    private static boolean isIpv4Shaped(String name) {
        String trimmed = name.endsWith(".") ? name.substring(0, name.length() - 1) : name;
        String last = trimmed.substring(trimmed.lastIndexOf('.') + 1);
        if (!last.isEmpty() && allDigits(last, 0, last.length())) return true;
        if (last.startsWith("0x") || last.startsWith("0X")) return true;
        for (int index = 0; index < name.length(); index++) {
            char c = name.charAt(index);
            if (c != '.' && !isDigit(c)) return false;
        }
        return true;
    }

    /** The four bytes of a dotted-quad written in the one form (each part 0–255, no leading zero), or null. */
    static int[] ipv4(String text) {
        int[] parts = new int[4];
        int start = 0;
        for (int part = 0; part < 4; part++) {
            int end = part == 3 ? text.length() : text.indexOf('.', start);
            if (end < 0) return null;
            int length = end - start;
            if (length < 1 || length > 3 || !allDigits(text, start, end)) return null;
            if (length > 1 && text.charAt(start) == '0') return null;
            int value = Integer.parseInt(text, start, end, 10);
            if (value > 255) return null;
            parts[part] = value;
            start = end + 1;
        }
        return parts;
    }

    /** The RFC 5952 text of an IPv6 literal (without brackets) that inet_pton would accept, or null. */
    private static String ipv6(String text) {
        if (text.indexOf('%') >= 0) return null; // a zone id names an interface of this machine, not a host
        int[] groups = Ipv6Parser.parse(text);
        return groups == null ? null : formatIpv6(groups);
    }

    /** RFC 5952: lower-case hex without leading zeros, the first longest run of two or more zero groups as {@code ::}. */
    static String formatIpv6(int[] groups) {
        if (groups[0] == 0 && groups[1] == 0 && groups[2] == 0 && groups[3] == 0 && groups[4] == 0 && groups[5] == 0xFFFF) {
            return "::ffff:" + (groups[6] >> 8) + "." + (groups[6] & 0xFF) + "." + (groups[7] >> 8) + "." + (groups[7] & 0xFF);
        }
        int bestStart = -1;
        int bestLength = 1; // a single zero group is written 0
        for (int index = 0; index < 8; ) {
            if (groups[index] != 0) {
                index++;
                continue;
            }
            int end = index;
            while (end < 8 && groups[end] == 0) end++;
            if (end - index > bestLength) {
                bestStart = index;
                bestLength = end - index;
            }
            index = end;
        }
        StringBuilder out = new StringBuilder(39);
        for (int index = 0; index < 8; index++) {
            if (index == bestStart) {
                out.append("::");
                index += bestLength - 1;
                continue;
            }
            if (out.length() > 0 && out.charAt(out.length() - 1) != ':') out.append(':');
            out.append(Integer.toHexString(groups[index]));
        }
        return out.toString();
    }

    /** A DNS name: one trailing dot dropped, no empty label, ASCII letters lowered, other labels as A-labels. */
    private static String dnsName(String name) {
        for (int index = 0; index < name.length(); index++) {
            char c = name.charAt(index);
            // Dots that IDNA maps to "." would make another name to the TLS stack than to the pins.
            if (c == '\u3002' || c == '\uFF0E' || c == '\uFF61') return null;
            // A lone surrogate is no Unicode scalar: such a name has no spelling to compare.
            if (Character.isHighSurrogate(c) && index + 1 < name.length() && Character.isLowSurrogate(name.charAt(index + 1))) {
                index++;
            } else if (Character.isSurrogate(c)) {
                return null;
            }
        }
        String trimmed = name.endsWith(".") ? name.substring(0, name.length() - 1) : name;
        if (trimmed.isEmpty()) return null;
        StringBuilder out = new StringBuilder(trimmed.length());
        int start = 0;
        while (true) {
            int end = trimmed.indexOf('.', start);
            if (end < 0) end = trimmed.length();
            if (end == start) return null;
            String label = PinName.fold(trimmed.substring(start, end));
            if (isAscii(label)) {
                out.append(label);
            } else {
                String encoded = Punycode.encode(label);
                if (encoded == null) return null;
                out.append("xn--").append(encoded);
            }
            if (end == trimmed.length()) return out.toString();
            out.append('.');
            start = end + 1;
        }
    }

    static boolean isAscii(String text) {
        for (int index = 0; index < text.length(); index++) {
            if (text.charAt(index) >= 0x80) return false;
        }
        return true;
    }

    private static boolean allDigits(String text, int start, int end) {
        for (int index = start; index < end; index++) {
            if (!isDigit(text.charAt(index))) return false;
        }
        return true;
    }

    /** ASCII 0–9 only: Character.isDigit would take other scripts' digits. */
    private static boolean isDigit(char c) {
        return c >= '0' && c <= '9';
    }
}
