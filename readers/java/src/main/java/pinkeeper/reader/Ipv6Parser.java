package pinkeeper.reader;

/**
 * Reads an IPv6 literal as {@code inet_pton(AF_INET6)} does, without a zone id or brackets: up to
 * eight groups of one to four ASCII hex digits separated by single colons, at most one {@code ::}
 * standing for one or more zero groups, and optionally a dotted IPv4 address (in its one form,
 * {@link HostName#ipv4}) in place of the last two groups.
 */
final class Ipv6Parser {
    private Ipv6Parser() {}

    /** The eight 16-bit groups, or null when {@code text} is not such a literal. */
    static int[] parse(String text) {
        int compression = text.indexOf("::");
        if (compression >= 0 && text.indexOf("::", compression + 1) >= 0) return null;
        int[] head;
        int[] tail;
        if (compression < 0) {
            head = groups(text, true);
            tail = new int[0];
            if (head == null || head.length != 8) return null;
        } else {
            String after = text.substring(compression + 2);
            head = groups(text.substring(0, compression), false);
            tail = groups(after, true);
            // "::" stands for at least one zero group.
            if (head == null || tail == null || head.length + tail.length > 7) return null;
        }
        int[] address = new int[8];
        System.arraycopy(head, 0, address, 0, head.length);
        System.arraycopy(tail, 0, address, 8 - tail.length, tail.length);
        return address;
    }

    /**
     * The groups of one side of {@code ::} (empty text: none). A dotted IPv4 address may end the
     * text only when {@code mayEndWithIpv4}, that is, when this side ends the literal.
     */
    private static int[] groups(String text, boolean mayEndWithIpv4) {
        if (text.isEmpty()) return new int[0];
        int[] out = new int[8];
        int count = 0;
        int start = 0;
        while (true) {
            int end = text.indexOf(':', start);
            boolean last = end < 0;
            if (last) end = text.length();
            if (count == 8) return null;
            String group = text.substring(start, end);
            if (last && mayEndWithIpv4 && group.indexOf('.') >= 0) {
                int[] quad = HostName.ipv4(group);
                if (quad == null || count > 6) return null;
                out[count++] = quad[0] << 8 | quad[1];
                out[count++] = quad[2] << 8 | quad[3];
            } else {
                int value = hexGroup(group);
                if (value < 0) return null;
                out[count++] = value;
            }
            if (last) return java.util.Arrays.copyOf(out, count);
            start = end + 1;
        }
    }

    /** One to four ASCII hex digits as a number; -1 otherwise. */
    private static int hexGroup(String group) {
        if (group.isEmpty() || group.length() > 4) return -1;
        int value = 0;
        for (int index = 0; index < group.length(); index++) {
            char c = group.charAt(index);
            int digit = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
            if (digit < 0) return -1;
            value = value << 4 | digit;
        }
        return value;
    }
}
