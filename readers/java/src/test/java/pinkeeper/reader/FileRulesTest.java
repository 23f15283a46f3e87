package pinkeeper.reader;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What the table's cases leave out of the file rules: permissions changed in place, a fallback
 * reached through a link in a directory others may write, a file larger than any cache, and
 * unknown members of any size.
 */
class FileRulesTest {
    static final String STORE = "banking";
    static final String NAME = "api.example.com";
    static final long NOW = 1_763_770_000L;

    @TempDir
    Path directory;

    @Test
    void aCacheFileMadeWritableByOthersInPlaceIsRefusedAtTheNextQuestion() throws Exception {
        TestCaches.setMode(directory, 0755);
        Path file = TestCaches.publish(directory, STORE, TestCaches.cache(STORE, "", TestCaches.entry(NAME, CacheReaderTest.b64(1))));
        CacheReader reader = CacheReader.forStore(STORE, directory, null, null);
        assertEquals(Verdict.TRUSTED, reader.verdict(NAME, CacheReaderTest.digest(1), 0, NOW));
        // chmod changes neither inode, size nor modification time: the permissions are watched too.
        TestCaches.setMode(file, 0666);
        CacheReaderException error = assertThrows(CacheReaderException.class, reader::refresh);
        assertEquals("insecure-permissions", error.code());
        assertTrue(error.getMessage().contains("may be written by any user (mode 0666)"), error.getMessage());
        // The last good pins stay in use, as for any refused version.
        assertEquals(Verdict.TRUSTED, reader.verdict(NAME, CacheReaderTest.digest(1), 0, NOW));
        TestCaches.setMode(file, 0644);
        reader.refresh();
        assertNull(reader.snapshot().problem());
    }

    @Test
    void aFallbackLinkInADirectoryOthersMayWriteIsRefused() throws Exception {
        Path safe = Files.createDirectory(directory.resolve("etc"));
        TestCaches.setMode(safe, 0755);
        Path target = TestCaches.publish(safe, "fallback.json",
                ("{\"fingerprints\": [" + TestCaches.entry(NAME, CacheReaderTest.b64(5)) + "]}").getBytes(StandardCharsets.UTF_8), 0644);
        Path open = Files.createDirectory(directory.resolve("open"));
        Path link = Files.createSymbolicLink(open.resolve("fallback.json"), target);
        TestCaches.setMode(open, 0777);
        CacheReaderException error = assertThrows(CacheReaderException.class, () -> CacheReader.readFallback(link));
        assertEquals("insecure-permissions", error.code());
        // The same link in a sticky directory, as /tmp is, is read.
        TestCaches.setMode(open, 01777);
        assertEquals(1, CacheReader.readFallback(link).size());
        // And the target's own directory counts as well.
        TestCaches.setMode(safe, 0777);
        assertEquals("insecure-permissions", assertThrows(CacheReaderException.class, () -> CacheReader.readFallback(link)).code());
    }

    @Test
    void aFileLargerThanAnyCacheIsTooLarge() throws Exception {
        Path file = directory.resolve(STORE + ".json");
        try (RandomAccessFile sparse = new RandomAccessFile(file.toFile(), "rw")) {
            sparse.setLength(CacheReader.MAXIMUM_FILE_SIZE + 1);
        }
        CacheReaderException error = assertThrows(CacheReaderException.class, () -> CacheReader.forStore(STORE, directory, null, null));
        assertEquals("too-large", error.code());
        assertEquals(CacheReaderException.Kind.INVALID, error.kind());
    }

    @Test
    void unknownMembersAreIgnoredWhateverTheirSize() throws Exception {
        String huge = "\"x\": " + "1".repeat(1001) + ", \"y\": -" + "9".repeat(5000) + ", \"z\": 1." + "5".repeat(3000) + "e99999,"
                + " \"s\": \"" + "a".repeat(21_000_000) + "\",\n";
        TestCaches.publish(directory, STORE, TestCaches.cache(STORE, huge, TestCaches.entry(NAME, CacheReaderTest.b64(1))));
        CacheReader reader = CacheReader.forStore(STORE, directory, null, null);
        assertEquals(Verdict.TRUSTED, reader.verdict(NAME, CacheReaderTest.digest(1), 0, NOW));
        // The same number where an integer is read is beyond 64 bits: invalid content, not JSON trouble.
        TestCaches.publish(directory, STORE, TestCaches.cache(STORE, "", TestCaches.entry(NAME, CacheReaderTest.b64(1)))
                .replace("\"updated\": 1763770000", "\"updated\": " + "1".repeat(1001)));
        assertEquals("invalid-content", assertThrows(CacheReaderException.class, reader::refresh).code());
    }
}
