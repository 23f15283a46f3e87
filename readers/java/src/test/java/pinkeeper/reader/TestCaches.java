package pinkeeper.reader;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;

/** Cache files as the daemon publishes them, written atomically (temporary file, then rename). */
final class TestCaches {
    static final long FAR_FUTURE = 4_000_000_000L;

    private TestCaches() {}

    static String entry(String name, String fingerprint, long expires, long depth) {
        return "{\"name\": \"" + name + "\", \"fingerprint\": \"" + fingerprint + "\", \"expires\": " + expires
                + (depth == 0 ? "" : ", \"depth\": " + depth) + "}";
    }

    static String entry(String name, String fingerprint) {
        return entry(name, fingerprint, FAR_FUTURE, 0);
    }

    /** A whole cache file of {@code store}; {@code extra} is inserted as further top-level members (may be empty). */
    static String cache(String store, String extra, String... entries) {
        return "{\n  \"fingerprints\": [" + String.join(",\n    ", entries) + "],\n" + extra
                + "  \"pinkeeper\": {\"format\": 1, \"store\": \"" + store + "\", \"source\": \"https://mus.example.com/app/init\","
                + " \"updated\": 1763770000, \"nextUpdate\": 1764374800}\n}\n";
    }

    /** Publishes {@code text} as {@code directory/<store>.json} the way the daemon does: a new inode, renamed into place. */
    static Path publish(Path directory, String store, String text) throws IOException {
        return publish(directory, store, text.getBytes(StandardCharsets.UTF_8));
    }

    /** The same for exact bytes (which need not be UTF-8). */
    static Path publish(Path directory, String store, byte[] content) throws IOException {
        return publish(directory, store + ".json", content, 0644);
    }

    /** {@code content} as {@code directory/fileName} with {@code mode} (set before the rename, as the daemon does). */
    static Path publish(Path directory, String fileName, byte[] content, int mode) throws IOException {
        Path target = directory.resolve(fileName);
        Path temporary = Files.createTempFile(directory, "." + fileName + ".tmp-", "");
        Files.write(temporary, content);
        setMode(temporary, mode);
        return Files.move(temporary, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    }

    /** chmod, sticky bit included (the JDK's "unix" view; PosixFilePermission has no sticky bit). */
    static void setMode(Path path, int mode) throws IOException {
        Files.setAttribute(path, "unix:mode", mode);
    }
}
