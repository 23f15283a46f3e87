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
        Path target = directory.resolve(store + ".json");
        Path temporary = Files.createTempFile(directory, "." + store + ".json.tmp-", "");
        Files.write(temporary, content);
        return Files.move(temporary, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    }
}
