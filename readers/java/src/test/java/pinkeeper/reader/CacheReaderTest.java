package pinkeeper.reader;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The reader's semantics on cache files it reads from disk (Wultra rules, reloading, bad versions). */
class CacheReaderTest {
    static final long NOW = 1_763_770_000L;
    static final String STORE = "banking";
    static final String NAME = "api.example.com";

    @TempDir
    Path directory;

    static byte[] digest(int seed) {
        return Certificates.sha256(new byte[] {(byte) seed});
    }

    static String b64(int seed) {
        return Base64.getEncoder().encodeToString(digest(seed));
    }

    CacheReader publishAndOpen(String extra, String... entries) throws Exception {
        TestCaches.publish(directory, STORE, TestCaches.cache(STORE, extra, entries));
        return CacheReader.forStore(STORE, directory, null, null);
    }

    @Test
    void aPinIsValidThroughItsExpirySecondAndNeverAfter() throws Exception {
        CacheReader reader = publishAndOpen("", TestCaches.entry(NAME, b64(1), NOW, 0));
        assertEquals(Verdict.TRUSTED, reader.verdict(NAME, digest(1), 0, NOW));
        assertEquals(Verdict.EMPTY, reader.verdict(NAME, digest(1), 0, NOW + 1));
        assertEquals(Verdict.EMPTY, reader.verdict(NAME, digest(2), 0, NOW + 1));
    }

    @Test
    void anyOfSeveralPinsForANameMatches() throws Exception {
        CacheReader reader = publishAndOpen("", TestCaches.entry(NAME, b64(1)), TestCaches.entry(NAME, b64(2)),
                TestCaches.entry("other.example.com", b64(3)));
        assertEquals(Verdict.TRUSTED, reader.verdict(NAME, digest(2), 0, NOW));
        assertEquals(Verdict.UNTRUSTED, reader.verdict(NAME, digest(3), 0, NOW));
    }

    @Test
    void namesFoldAsciiLettersAndNothingElse() throws Exception {
        CacheReader reader = publishAndOpen("", TestCaches.entry("Api.Example.COM", b64(1)), TestCaches.entry("kelvin.example", b64(2)),
                TestCaches.entry("i.example", b64(3)), TestCaches.entry("caf\u00e9.example", b64(4)),
                TestCaches.entry("\u00fc.example", b64(5)));
        assertEquals(Verdict.TRUSTED, reader.verdict("api.example.com", digest(1), 0, NOW));
        assertEquals(Verdict.TRUSTED, reader.verdict("API.EXAMPLE.com", digest(1), 0, NOW));
        // One trailing dot is dropped (the host's one form), so it names the same host.
        assertEquals(Verdict.TRUSTED, reader.verdict("api.example.com.", digest(1), 0, NOW));
        // What String.equalsIgnoreCase or toLowerCase would fold, and Unicode normalisation would join.
        assertEquals(Verdict.EMPTY, reader.verdict("\u212Aelvin.example", digest(2), 0, NOW));
        assertEquals(Verdict.EMPTY, reader.verdict("\u0131.example", digest(3), 0, NOW));
        assertEquals(Verdict.EMPTY, reader.verdict("\u0130.example", digest(3), 0, NOW));
        assertEquals(Verdict.EMPTY, reader.verdict("cafe\u0301.example", digest(4), 0, NOW));
        assertEquals(Verdict.EMPTY, reader.verdict("\u00dc.example", digest(5), 0, NOW));
        // H is the A-label of a label with other characters: pins are listed under it, never as U-labels.
        assertEquals(Verdict.EMPTY, reader.verdict("CAF\u00e9.example", digest(4), 0, NOW));

        assertTrue(PinName.same("API.example.com", "api.EXAMPLE.com"));
        assertFalse(PinName.same("\u212A", "k"));
        assertFalse(PinName.same("\u0131", "I"));
        assertEquals("\u212Aelvin-\u0130.example", PinName.fold("\u212Aelvin-\u0130.EXAMPLE"));
    }

    @Test
    void theHostDecidesAndTheCommonNameOnlyAddsPins() throws Exception {
        // "Pin only my API": api requires pinning, cdn and unlisted names do not.
        CacheReader reader = publishAndOpen("  \"domainsConfig\": {\"sslPinningRequiredForUnlisted\": false, \"domains\": ["
                + "{\"name\": \"" + NAME + "\", \"sslPinningRequired\": true}, "
                + "{\"name\": \"cdn.example.com\", \"sslPinningRequired\": false}]},\n",
                TestCaches.entry(NAME, b64(1)), TestCaches.entry("www.example.com", b64(2)));
        // A certificate for the API whose CN its holder set to an exempt name stays pinned.
        assertEquals(Verdict.UNTRUSTED, reader.verdict(new PeerNames(NAME, "unlisted.example"), digest(3), 0, NOW));
        assertEquals(Verdict.UNTRUSTED, reader.verdict(new PeerNames(NAME, "cdn.example.com"), digest(3), 0, NOW));
        assertEquals(Verdict.UNTRUSTED, reader.verdictForChainDigests(new PeerNames(NAME, "www.example.com"), List.of(digest(3)), NOW));
        // Exempt only when both names are.
        assertEquals(Verdict.TRUSTED, reader.verdict(new PeerNames("cdn.example.com", "unlisted.example"), digest(3), 0, NOW));
        assertEquals(Verdict.UNTRUSTED, reader.verdict(new PeerNames("cdn.example.com", NAME), digest(3), 0, NOW));
        // Pins under either name match; a CN that is the host in other letters is one name.
        assertEquals(Verdict.TRUSTED, reader.verdict(new PeerNames(NAME, "gw-7.internal.example"), digest(1), 0, NOW));
        assertEquals(Verdict.TRUSTED, reader.verdict(new PeerNames(NAME, "WWW.example.com"), digest(2), 0, NOW));
        assertEquals(Verdict.TRUSTED, reader.verdict(new PeerNames(NAME, NAME.toUpperCase(java.util.Locale.ROOT)), digest(1), 0, NOW));
        // The host-only methods ask about the host alone.
        assertEquals(Verdict.UNTRUSTED, reader.verdict(NAME, digest(2), 0, NOW));
        assertEquals(Verdict.TRUSTED, reader.verdict("unlisted.example", digest(3), 0, NOW));
        assertEquals("'api.example.com' (certificate common name 'gw-7\\u{7}\\n')", new PeerNames(NAME, "gw-7\u0007\n").described());
        assertEquals("'api.example.com'", new PeerNames(NAME, "API.example.com").described());
    }

    @Test
    void anEmptyOrMissingHostIsUntrustedInEveryQuestionWhateverTheCommonName() throws Exception {
        // Unlisted names need no pin, and the certificate's CN has a pin that matches: with no H,
        // only the name its holder chose would be left to decide by.
        CacheReader reader = publishAndOpen("  \"domainsConfig\": {\"sslPinningRequiredForUnlisted\": false, \"domains\": ["
                + "{\"name\": \"" + NAME + "\", \"sslPinningRequired\": true}]},\n",
                TestCaches.entry(NAME, b64(1)), TestCaches.entry("unlisted.example", b64(2)));
        for (String host : new String[] {"", null}) {
            String label = "host " + (host == null ? "null" : "\"\"");
            PeerNames withCommonName = new PeerNames(host, "unlisted.example");
            assertEquals(Verdict.UNTRUSTED, reader.verdict(withCommonName, digest(2), 0, NOW), label);
            assertEquals(Verdict.UNTRUSTED, reader.verdict(withCommonName, digest(3), 0, NOW), label);
            assertEquals(Verdict.UNTRUSTED, reader.verdictForChainDigests(withCommonName, List.of(digest(2)), NOW), label);
            assertEquals(Verdict.UNTRUSTED, reader.verdict(PeerNames.host(host), digest(3), 0, NOW), label);
            assertEquals(Verdict.UNTRUSTED, reader.verdict(host, digest(3), 0, NOW), label);
            assertEquals(Verdict.UNTRUSTED, reader.verdictForChainDigests(host, List.of(digest(3)), NOW), label);
            assertFalse(reader.admits(withCommonName), label);
            PinValidator validator = new PinValidator(List.of(new Pin("unlisted.example", digest(2), TestCaches.FAR_FUTURE, 0)),
                    List.of("unlisted.example"), new DomainsConfig(false, List.of()));
            assertEquals(Verdict.UNTRUSTED, validator.validate(withCommonName, digest(2), 0, NOW), label);
            assertEquals(Verdict.UNTRUSTED, validator.validateChain(withCommonName, List.of(digest(2)), NOW), label);
            assertFalse(validator.admits(withCommonName), label);
            assertTrue(new DomainsConfig(false, List.of()).pinningRequired(withCommonName), label);
            assertEquals("'' (certificate common name 'unlisted.example')", withCommonName.described(), label);
        }
    }

    @Test
    void expectedNamesAdmitTheHostOrTheCommonName() throws Exception {
        TestCaches.publish(directory, STORE,
                TestCaches.cache(STORE, "", TestCaches.entry(NAME, b64(1)), TestCaches.entry("*.example.com", b64(2))));
        CacheReader reader = CacheReader.forStore(STORE, directory, null, List.of("*.example.com", "API.example.com"));
        assertEquals(Verdict.TRUSTED, reader.verdict(new PeerNames("localhost", "*.example.com"), digest(2), 0, NOW));
        assertEquals(Verdict.TRUSTED, reader.verdict(new PeerNames(NAME, "unlisted.example"), digest(1), 0, NOW));
        assertEquals(Verdict.UNTRUSTED, reader.verdict(new PeerNames("localhost", "unlisted.example"), digest(2), 0, NOW));
        assertEquals(Verdict.UNTRUSTED, reader.verdict("localhost", digest(2), 0, NOW));
        assertTrue(reader.admits(new PeerNames("localhost", "*.EXAMPLE.com")));
        assertFalse(reader.admits(PeerNames.host("\u212A.example.com")));
    }

    @Test
    void fallbackPinsCountAfterTheCachedOnesAndTheirDomainsConfigIsIgnored() throws Exception {
        Path fallback = directory.resolve("fallback.json");
        Files.writeString(fallback, "{\"fingerprints\": [" + TestCaches.entry(NAME, b64(5)) + "],"
                + " \"domainsConfig\": {\"sslPinningRequiredForUnlisted\": false, \"domains\": []}}");
        CacheReader reader = CacheReader.forStore(STORE, directory, fallback, null);
        assertEquals(Verdict.TRUSTED, reader.verdict(NAME, digest(5), 0, NOW));
        assertEquals(Verdict.UNTRUSTED, reader.verdict(NAME, digest(6), 0, NOW));
        assertEquals(Verdict.EMPTY, reader.verdict("unlisted.example.com", digest(6), 0, NOW));
    }

    @Test
    void expectedCommonNamesComeBeforeDomainsConfigAndAnEmptyStore() throws Exception {
        TestCaches.publish(directory, STORE, TestCaches.cache(STORE,
                "  \"domainsConfig\": {\"sslPinningRequiredForUnlisted\": true, \"domains\": ["
                        + "{\"name\": \"cdn.example.com\", \"sslPinningRequired\": false}]},\n"));
        CacheReader reader = CacheReader.forStore(STORE, directory, null, List.of(NAME));
        assertEquals(Verdict.UNTRUSTED, reader.verdict("evil.example.com", digest(1), 0, NOW));
        assertEquals(Verdict.EMPTY, reader.verdict(NAME, digest(1), 0, NOW));
        // cdn.example.com needs no pinning by domainsConfig, but the operator did not expect it.
        assertEquals(Verdict.UNTRUSTED, reader.verdict("cdn.example.com", digest(1), 0, NOW));
    }

    @Test
    void domainsConfigDecidesWhichNamesNeedPinning() throws Exception {
        CacheReader reader = publishAndOpen("  \"domainsConfig\": {\"sslPinningRequiredForUnlisted\": false, \"domains\": ["
                + "{\"name\": \"" + NAME + "\", \"sslPinningRequired\": true}, "
                + "{\"name\": \"cdn.example.com\", \"sslPinningRequired\": false}]},\n",
                TestCaches.entry(NAME, b64(1)));
        assertEquals(Verdict.UNTRUSTED, reader.verdict(NAME, digest(2), 0, NOW));
        assertEquals(Verdict.TRUSTED, reader.verdict("cdn.example.com", digest(2), 0, NOW));
        assertEquals(Verdict.TRUSTED, reader.verdict("unlisted.example.com", digest(2), 0, NOW));
    }

    @Test
    void pinsApplyOnlyAtTheirDepthAndPinsDeeperThanTheChainAreSkipped() throws Exception {
        CacheReader reader = publishAndOpen("", TestCaches.entry(NAME, b64(1), TestCaches.FAR_FUTURE, 1));
        assertEquals(Verdict.TRUSTED, reader.verdict(NAME, digest(1), 1, NOW));
        assertEquals(Verdict.EMPTY, reader.verdict(NAME, digest(1), 0, NOW));
        assertEquals(Verdict.TRUSTED, reader.verdictForChainDigests(NAME, List.of(digest(9), digest(1)), NOW));
        assertEquals(Verdict.UNTRUSTED, reader.verdictForChainDigests(NAME, List.of(digest(1), digest(9)), NOW));
        assertEquals(Verdict.EMPTY, reader.verdictForChainDigests(NAME, List.of(digest(1)), NOW));
    }

    @Test
    void aStaticStoreIgnoresDomainsConfigAndPinsAtDepthAboveZero() throws Exception {
        String domains = "  \"domainsConfig\": {\"sslPinningRequiredForUnlisted\": false, \"domains\": []},\n";
        for (String mode : new String[] {"static"}) {
            TestCaches.publish(directory, STORE, TestCaches.cache(STORE, domains,
                    TestCaches.entry(NAME, b64(1), TestCaches.FAR_FUTURE, 1), TestCaches.entry("leaf.example.com", b64(2)))
                    .replace("\"format\": 1,", "\"format\": 1, \"mode\": \"" + mode + "\","));
            CacheReader reader = CacheReader.forStore(STORE, directory, null, null);
            assertEquals(Verdict.EMPTY, reader.verdict(NAME, digest(1), 1, NOW), mode);
            assertEquals(Verdict.UNTRUSTED, reader.verdict("leaf.example.com", digest(3), 0, NOW), mode);
            assertEquals(Verdict.TRUSTED, reader.verdict("leaf.example.com", digest(2), 0, NOW), mode);
        }
        TestCaches.publish(directory, STORE, TestCaches.cache(STORE, domains, TestCaches.entry(NAME, b64(1), TestCaches.FAR_FUTURE, 1))
                .replace("\"format\": 1,", "\"format\": 1, \"mode\": \"challenge\","));
        CacheReader challenge = CacheReader.forStore(STORE, directory, null, null);
        assertEquals(Verdict.TRUSTED, challenge.verdict(NAME, digest(1), 1, NOW));
        assertEquals(Verdict.TRUSTED, challenge.verdict("unlisted.example.com", digest(3), 0, NOW));
    }

    @Test
    void unknownMembersAreIgnoredAtEveryLevel() throws Exception {
        CacheReader reader = publishAndOpen("  \"timestamp\": 5, \"future\": {\"x\": [1, 2]},\n",
                "{\"name\": \"" + NAME + "\", \"fingerprint\": \"" + b64(1) + "\", \"expires\": " + TestCaches.FAR_FUTURE
                        + ", \"key\": \"a1b2\", \"signature\": \"MEQC\", \"somethingNew\": null}");
        assertEquals(Verdict.TRUSTED, reader.verdict(NAME, digest(1), 0, NOW));
    }

    @Test
    void aMissingFileMeansNoCachedPinsUntilItAppears() throws Exception {
        CacheReader reader = CacheReader.forStore(STORE, directory, null, null);
        assertEquals(Verdict.EMPTY, reader.verdict(NAME, digest(1), 0, NOW));
        assertNull(reader.snapshot().cache());
        TestCaches.publish(directory, STORE, TestCaches.cache(STORE, "", TestCaches.entry(NAME, b64(1))));
        assertEquals(Verdict.TRUSTED, reader.verdict(NAME, digest(1), 0, NOW));
        Files.delete(directory.resolve(STORE + ".json"));
        assertEquals(Verdict.EMPTY, reader.verdict(NAME, digest(1), 0, NOW));
    }

    @Test
    void aNewVersionIsReadAndAnUnchangedFileIsNot() throws Exception {
        CacheReader reader = publishAndOpen("", TestCaches.entry(NAME, b64(1)));
        TestCaches.publish(directory, STORE, TestCaches.cache(STORE, "", TestCaches.entry(NAME, b64(2))));
        assertEquals(Verdict.TRUSTED, reader.verdict(NAME, digest(2), 0, NOW));
        assertEquals(Verdict.UNTRUSTED, reader.verdict(NAME, digest(1), 0, NOW));

        // Same inode, size and modification time: the reader answers from what it parsed before.
        Path file = directory.resolve(STORE + ".json");
        FileTime modified = Files.getLastModifiedTime(file);
        String same = Files.readString(file).replace(b64(2), b64(3));
        Files.writeString(file, same, StandardOpenOption.TRUNCATE_EXISTING);
        Files.setLastModifiedTime(file, modified);
        assertEquals(Verdict.TRUSTED, reader.verdict(NAME, digest(2), 0, NOW));
        Files.setLastModifiedTime(file, FileTime.fromMillis(modified.toMillis() + 1000));
        assertEquals(Verdict.TRUSTED, reader.verdict(NAME, digest(3), 0, NOW));
    }

    @Test
    void anInvalidNewVersionKeepsTheLastGoodPinsAndSaysWhy() throws Exception {
        CacheReader reader = publishAndOpen("", TestCaches.entry(NAME, b64(1)));
        TestCaches.publish(directory, STORE, "{\"fingerprints\": [");
        assertEquals(Verdict.TRUSTED, reader.verdict(NAME, digest(1), 0, NOW));
        CacheReaderException problem = reader.snapshot().problem();
        assertNotNull(problem);
        assertEquals(CacheReaderException.Kind.INVALID, problem.kind());
        assertEquals("not-json", problem.code());
        assertTrue(problem.getMessage().endsWith("banking.json is not a pinkeeper cache file: not valid JSON"), problem.getMessage());
        assertThrows(CacheReaderException.class, reader::refresh);

        TestCaches.publish(directory, STORE, TestCaches.cache("another-store", "", TestCaches.entry(NAME, b64(2))));
        assertEquals(Verdict.TRUSTED, reader.verdict(NAME, digest(1), 0, NOW));
        assertTrue(reader.snapshot().problem().getMessage().endsWith("belongs to store 'another-store', not 'banking': check the store's"
                + " cache_directory"), reader.snapshot().problem().getMessage());
        assertEquals("wrong-store", reader.snapshot().problem().code());

        TestCaches.publish(directory, STORE, TestCaches.cache(STORE, "", TestCaches.entry(NAME, b64(2))));
        assertEquals(Verdict.TRUSTED, reader.verdict(NAME, digest(2), 0, NOW));
        assertNull(reader.snapshot().problem());
    }

    @Test
    void anInvalidFileAtStartIsAnErrorNamingFileAndField() throws Exception {
        String[][] broken = {
            {TestCaches.cache(STORE, "", TestCaches.entry(NAME, "AAAA")),
                "fingerprints[0].fingerprint is not the base64 of a 32-byte SHA-256 digest", "invalid-content"},
            {TestCaches.cache(STORE, "", TestCaches.entry(NAME, b64(1).replace("=", ""))), "fingerprints[0].fingerprint is not the base64",
                "invalid-content"},
            {TestCaches.cache(STORE, "", TestCaches.entry(NAME, b64(1), -1, -2)), "fingerprints[0].depth is negative", "invalid-content"},
            {TestCaches.cache(STORE, "", TestCaches.entry(NAME, b64(1)).replace("4000000000", "4.5")),
                "fingerprints[0].expires is not an integer", "invalid-content"},
            {TestCaches.cache(STORE, "", "{\"fingerprint\": \"" + b64(1) + "\", \"expires\": 1}"), "fingerprints[0].name is missing",
                "invalid-content"},
            {TestCaches.cache(STORE, "").replace("\"format\": 1", "\"format\": 2"),
                "pinkeeper.format is 2, a cache format this reader does not read", "unsupported-format"},
            {TestCaches.cache(STORE, "").replace("\"format\": 1", "\"format\": 1, \"mode\": \"dynamic\""),
                "pinkeeper.mode is 'dynamic', a mode this reader does not know", "unsupported-format"},
            {"{\"fingerprints\": []}", "the \"pinkeeper\" metadata object is missing", "missing-metadata"},
            {"[]", "the document is not an object", "invalid-content"},
            {TestCaches.cache(STORE, "") + "{}", "not valid JSON", "not-json"},
        };
        for (String[] example : broken) {
            TestCaches.publish(directory, STORE, example[0]);
            CacheReaderException error = assertThrows(CacheReaderException.class,
                    () -> CacheReader.forStore(STORE, directory, null, null), example[1]);
            assertEquals(CacheReaderException.Kind.INVALID, error.kind());
            assertEquals(example[2], error.code(), example[1]);
            assertTrue(error.getMessage().startsWith(directory.resolve("banking.json") + " is not a pinkeeper cache file: " + example[1]),
                    error.getMessage());
        }
    }

    /** A FIFO at {@code path}, made by mkfifo(1). */
    static void mkfifo(Path path) throws Exception {
        Process process = new ProcessBuilder("mkfifo", path.toString()).inheritIO().start();
        assertTrue(process.waitFor(30, TimeUnit.SECONDS) && process.exitValue() == 0, "mkfifo " + path);
    }

    /** Puts {@code planted} (a FIFO or symlink made under a temporary name) in place of the cache file, atomically. */
    static void replaceWith(Path directory, Path planted) throws Exception {
        Files.move(planted, directory.resolve(STORE + ".json"), StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    }

    /** No file operation here may wait on a FIFO: a hang fails the test instead of the suite. */
    static final Duration NO_HANG = Duration.ofSeconds(10);

    @Test
    void aSymlinkAtTheCachePathIsRefusedNeverFollowed() throws Exception {
        Path elsewhere = Files.createDirectory(directory.resolve("elsewhere"));
        Path target = TestCaches.publish(elsewhere, STORE, TestCaches.cache(STORE, "", TestCaches.entry(NAME, b64(1))));
        Files.createSymbolicLink(directory.resolve(STORE + ".json"), target);
        CacheReaderException error = assertThrows(CacheReaderException.class, () -> CacheReader.forStore(STORE, directory, null, null));
        assertEquals(CacheReaderException.Kind.UNREADABLE, error.kind());
        assertEquals("symlink", error.code());
        assertEquals(directory.resolve(STORE + ".json") + " is a symlink, which is never followed", error.getMessage());
        assertThrows(CacheReaderException.class, () -> CacheReader.readCacheFile(directory.resolve(STORE + ".json"), STORE));

        // A dangling one too (it is no missing file).
        Files.delete(directory.resolve(STORE + ".json"));
        Files.createSymbolicLink(directory.resolve(STORE + ".json"), directory.resolve("nowhere.json"));
        assertTrue(assertThrows(CacheReaderException.class, () -> CacheReader.forStore(STORE, directory, null, null))
                .getMessage().endsWith("is a symlink, which is never followed"));
    }

    @Test
    void aFifoAtTheCachePathIsRefusedWithoutWaiting() throws Exception {
        mkfifo(directory.resolve(STORE + ".json"));
        CacheReaderException error = assertTimeoutPreemptively(NO_HANG,
                () -> assertThrows(CacheReaderException.class, () -> CacheReader.forStore(STORE, directory, null, null)));
        assertEquals(CacheReaderException.Kind.UNREADABLE, error.kind());
        assertEquals("not-regular-file", error.code());
        assertTrue(error.getMessage().endsWith("is not a regular file (a FIFO, device or directory?)"), error.getMessage());
    }

    @Test
    void aFifoOrSymlinkReplacingAGoodVersionLeavesTheLastGoodPinsInUse() throws Exception {
        CacheReader reader = publishAndOpen("", TestCaches.entry(NAME, b64(1)));
        assertEquals(Verdict.TRUSTED, reader.verdict(NAME, digest(1), 0, NOW));

        Path fifo = directory.resolve(".fifo");
        mkfifo(fifo);
        replaceWith(directory, fifo);
        assertTimeoutPreemptively(NO_HANG, () -> assertEquals(Verdict.TRUSTED, reader.verdict(NAME, digest(1), 0, NOW)));
        assertTrue(reader.snapshot().problem().getMessage().endsWith("is not a regular file (a FIFO, device or directory?)"));

        Path elsewhere = Files.createDirectory(directory.resolve("elsewhere"));
        Path target = TestCaches.publish(elsewhere, STORE, TestCaches.cache(STORE, "", TestCaches.entry(NAME, b64(2))));
        Path link = Files.createSymbolicLink(directory.resolve(".link"), target);
        replaceWith(directory, link);
        assertEquals(Verdict.UNTRUSTED, reader.verdict(NAME, digest(2), 0, NOW));
        assertEquals(Verdict.TRUSTED, reader.verdict(NAME, digest(1), 0, NOW));
        assertTrue(reader.snapshot().problem().getMessage().endsWith("is a symlink, which is never followed"));
    }

    @Test
    void anOpenBlockedByAFifoSwappedInAfterTheCheckGivesUpInTime() throws Exception {
        // The type check passed on a regular file; the open then meets a FIFO without a writer.
        Path fifo = directory.resolve("swapped.json");
        mkfifo(fifo);
        CacheReaderException error = assertTimeoutPreemptively(NO_HANG,
                () -> assertThrows(CacheReaderException.class, () -> CacheReader.open(fifo, false, 200)));
        assertEquals(fifo + " did not open within 200 ms (a FIFO put in its place?)", error.getMessage());
        // Release the thread still blocked in open(2): a writer arrives, and what it opened is closed.
        assertTimeoutPreemptively(NO_HANG, () -> FileChannel.open(fifo, StandardOpenOption.WRITE).close());
    }

    /** Threads of this reader library blocked in opening a file now. */
    static long threadsBlockedInOpen() {
        return Thread.getAllStackTraces().entrySet().stream()
                .filter(thread -> thread.getKey().getName().startsWith("pinkeeper-cache-open") && thread.getKey().isAlive())
                .filter(thread -> java.util.Arrays.stream(thread.getValue())
                        .anyMatch(frame -> frame.getClassName().equals("java.nio.channels.FileChannel")
                                && frame.getMethodName().equals("open")))
                .count();
    }

    /**
     * A hook for {@link CacheReader#beforeOpen}: each time the reader is about to open a version
     * it found to be a regular file, a new FIFO takes its place (the race a type check cannot
     * close). Each FIFO keeps a second name in {@code kept}, so the test can release its opens.
     */
    Runnable swapInAFifo(List<Path> kept) {
        return () -> {
            try {
                Path fifo = directory.resolve(".fifo");
                mkfifo(fifo);
                kept.add(Files.createLink(directory.resolve(".kept-" + kept.size()), fifo));
                replaceWith(directory, fifo);
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        };
    }

    /**
     * Opening a FIFO for reading and writing never blocks on Linux and counts as a writer: an open
     * blocked on it returns (and the reader closes what it opened).
     */
    static void release(List<Path> kept) throws Exception {
        for (Path fifo : kept) FileChannel.open(fifo, StandardOpenOption.READ, StandardOpenOption.WRITE).close();
    }

    @Test
    void repeatedFifoSwapsLeaveAtMostOneOpenBlocked() throws Exception {
        CacheReader reader = publishAndOpen("", TestCaches.entry(NAME, b64(1)));
        reader.openTimeoutMillis = 200;
        List<Path> kept = new java.util.concurrent.CopyOnWriteArrayList<>();
        long before = threadsBlockedInOpen();
        reader.beforeOpen = swapInAFifo(kept);
        try {
            for (int round = 0; round < 5; round++) {
                TestCaches.publish(directory, STORE, TestCaches.cache(STORE, "", TestCaches.entry(NAME, b64(2 + round))));
                assertTimeoutPreemptively(NO_HANG, () -> assertEquals(Verdict.TRUSTED, reader.verdict(NAME, digest(1), 0, NOW)));
                assertNotNull(reader.snapshot().problem(), "round " + round);
            }
            assertEquals(1, threadsBlockedInOpen() - before, "threads left blocked in open(2) by 5 swaps");
            assertTrue(reader.snapshot().problem().getMessage().contains("an earlier open of it has not returned"),
                    reader.snapshot().problem().getMessage());
        } finally {
            reader.beforeOpen = null;
            release(kept);
        }
        // Once the blocked open returns, the reader reads the current version again.
        TestCaches.publish(directory, STORE, TestCaches.cache(STORE, "", TestCaches.entry(NAME, b64(9))));
        assertTimeoutPreemptively(NO_HANG, () -> {
            while (threadsBlockedInOpen() > before) Thread.sleep(10);
        });
        assertEquals(Verdict.TRUSTED, reader.verdict(NAME, digest(9), 0, NOW));
        assertNull(reader.snapshot().problem());
    }

    @Test
    void questionsDuringABlockedOpenAnswerFromTheLastGoodPinsWithoutWaiting() throws Exception {
        CacheReader reader = publishAndOpen("", TestCaches.entry(NAME, b64(1)));
        reader.openTimeoutMillis = 3_000;
        List<Path> kept = new java.util.concurrent.CopyOnWriteArrayList<>();
        java.util.concurrent.CountDownLatch swapped = new java.util.concurrent.CountDownLatch(1);
        Runnable swap = swapInAFifo(kept);
        reader.beforeOpen = () -> {
            swap.run();
            swapped.countDown();
        };
        java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(4);
        try {
            TestCaches.publish(directory, STORE, TestCaches.cache(STORE, "", TestCaches.entry(NAME, b64(2))));
            // This question starts the open, which blocks, and waits for it (3 s here, 5 by default).
            java.util.concurrent.Future<Verdict> first = pool.submit(() -> reader.verdict(NAME, digest(2), 0, NOW));
            assertTrue(swapped.await(10, TimeUnit.SECONDS));
            reader.beforeOpen = null;
            List<java.util.concurrent.Future<Long>> others = new java.util.ArrayList<>();
            for (int index = 0; index < 3; index++) {
                others.add(pool.submit(() -> {
                    long start = System.nanoTime();
                    assertEquals(Verdict.TRUSTED, reader.verdict(NAME, digest(1), 0, NOW));
                    assertEquals(Verdict.UNTRUSTED, reader.verdict(NAME, digest(2), 0, NOW));
                    reader.snapshot();
                    return (System.nanoTime() - start) / 1_000_000;
                }));
            }
            for (java.util.concurrent.Future<Long> other : others) {
                long millis = other.get(10, TimeUnit.SECONDS);
                assertTrue(millis < 100, "a question during the blocked open took " + millis + " ms");
            }
            // The question that started the open gave up after 3 s and answered from the last good pins too.
            assertEquals(Verdict.UNTRUSTED, first.get(10, TimeUnit.SECONDS));
            assertTrue(reader.snapshot().problem().getMessage().contains("(a FIFO put in its place?)"),
                    reader.snapshot().problem().getMessage());
        } finally {
            reader.beforeOpen = null;
            release(kept);
            pool.shutdownNow();
        }
    }

    @Test
    void aFifoThatAlreadyHasAWriterIsRefusedBeforeAnyRead() throws Exception {
        Path fifo = directory.resolve("fed.json");
        mkfifo(fifo);
        CompletableFuture<FileChannel> writer = CompletableFuture.supplyAsync(() -> {
            try {
                return FileChannel.open(fifo, StandardOpenOption.WRITE); // blocks until a reader opens it
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        });
        try {
            // Reading would wait for the writer's data for ever; the reader seeks first, which fails on a pipe.
            CacheReaderException error = assertTimeoutPreemptively(NO_HANG,
                    () -> assertThrows(CacheReaderException.class, () -> CacheReader.open(fifo, false, 5_000)));
            assertTrue(error.getMessage().endsWith("is not a regular file (a FIFO, device or directory?)"), error.getMessage());
        } finally {
            assertTimeoutPreemptively(NO_HANG, () -> writer.get().close());
        }
    }

    @Test
    void theFallbackFileMayBeASymlinkButNotAFifo() throws Exception {
        Path real = directory.resolve("fallback-real.json");
        Files.writeString(real, "{\"fingerprints\": [" + TestCaches.entry(NAME, b64(5)) + "]}");
        Path link = Files.createSymbolicLink(directory.resolve("fallback.json"), real);
        assertEquals(Verdict.TRUSTED, CacheReader.forStore(STORE, directory, link, null).verdict(NAME, digest(5), 0, NOW));
        Path fifo = directory.resolve("fallback-fifo.json");
        mkfifo(fifo);
        CacheReaderException error = assertTimeoutPreemptively(NO_HANG,
                () -> assertThrows(CacheReaderException.class, () -> CacheReader.forStore(STORE, directory, fifo, null)));
        assertTrue(error.getMessage().endsWith("is not a regular file (a FIFO, device or directory?)"), error.getMessage());
    }

    @Test
    void aDirectoryInPlaceOfTheFileIsUnreadable() throws Exception {
        Files.createDirectory(directory.resolve(STORE + ".json"));
        CacheReaderException error = assertThrows(CacheReaderException.class, () -> CacheReader.forStore(STORE, directory, null, null));
        assertEquals(CacheReaderException.Kind.UNREADABLE, error.kind());
        assertEquals("not-regular-file", error.code());
    }

    @Test
    void theLeafsMostSpecificCommonNameIsTheLastInDerOrder() throws Exception {
        Path pki = Files.createDirectory(directory.resolve("pki"));
        TestPki maker = new TestPki(pki);
        TestPki.Issued root = maker.selfSigned("root", "first/O=Example/CN=second", "root");
        assertEquals("second", Certificates.commonName(root.certificate()));
        byte[] pem = Files.readAllBytes(root.certificateFile());
        assertEquals(root.fingerprintBase64(), Base64.getEncoder().encodeToString(
                Certificates.sha256(Base64.getMimeDecoder().decode(new String(pem, StandardCharsets.US_ASCII)
                        .replaceAll("-----[A-Z ]+-----", "")))));
    }
}
