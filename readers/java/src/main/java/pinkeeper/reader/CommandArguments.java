package pinkeeper.reader;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;

/**
 * The command line's arguments as the UTF-8 the process was given. Java decodes {@code argv} in
 * the locale's encoding: under {@code LC_ALL=C} {@code --name bücher.example} arrives as
 * {@code b??cher.example}, another (unlisted) name, which a store pinning
 * {@code xn--bcher-kva.example} would leave unpinned. So in any other locale than UTF-8 the
 * arguments are read again from {@code /proc/self/cmdline}, where they are the bytes given.
 */
final class CommandArguments {
    private CommandArguments() {}

    /** {@code decoded} when the platform decodes arguments as UTF-8; else the raw ones, or null when they cannot be had. */
    static String[] utf8(String[] decoded) {
        String encoding = System.getProperty("sun.jnu.encoding", "UTF-8");
        if (encoding.equalsIgnoreCase("UTF-8") || encoding.equalsIgnoreCase("UTF8") || allAscii(decoded)) return decoded;
        List<String> raw;
        try {
            raw = split(Files.readAllBytes(Paths.get("/proc/self/cmdline")));
        } catch (IOException | SecurityException e) { // CharacterCodingException: not UTF-8
            return null;
        }
        if (raw.size() < decoded.length) return null;
        String[] ours = raw.subList(raw.size() - decoded.length, raw.size()).toArray(String[]::new);
        // The application's arguments come last; an ASCII one must be the same in both.
        for (int index = 0; index < ours.length; index++) {
            if (HostName.isAscii(decoded[index]) && !decoded[index].equals(ours[index])) return null;
        }
        return ours;
    }

    private static boolean allAscii(String[] arguments) {
        for (String argument : arguments) {
            if (!HostName.isAscii(argument)) return false;
        }
        return true;
    }

    /** The NUL-terminated strings of {@code cmdline}, each strict UTF-8. */
    private static List<String> split(byte[] cmdline) throws CharacterCodingException {
        List<String> strings = new ArrayList<>();
        int start = 0;
        for (int index = 0; index < cmdline.length; index++) {
            if (cmdline[index] != 0) continue;
            strings.add(StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(cmdline, start, index - start)).toString());
            start = index + 1;
        }
        return strings;
    }
}
