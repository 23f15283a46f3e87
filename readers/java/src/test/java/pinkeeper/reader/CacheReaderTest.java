package pinkeeper.reader;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileTime;
import java.util.Base64;
import java.util.List;
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
    void anyOfSeveralPinsForANameMatchesAndNamesAreExact() throws Exception {
        CacheReader reader = publishAndOpen("", TestCaches.entry(NAME, b64(1)), TestCaches.entry(NAME, b64(2)),
                TestCaches.entry("other.example.com", b64(3)));
        assertEquals(Verdict.TRUSTED, reader.verdict(NAME, digest(2), 0, NOW));
        assertEquals(Verdict.UNTRUSTED, reader.verdict(NAME, digest(3), 0, NOW));
        assertEquals(Verdict.EMPTY, reader.verdict("API.example.com", digest(1), 0, NOW));
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
                + "{\"name\": \"" + NAME + "\", \"sslPinningRequired\": true}, {\"name\": \"cdn.example.com\", \"sslPinningRequired\": false}]},\n",
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
        for (String mode : new String[] {"static", "a-mode-this-reader-does-not-know"}) {
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
        assertTrue(problem.getMessage().endsWith("banking.json is not a pinkeeper cache file: not valid JSON"), problem.getMessage());
        assertThrows(CacheReaderException.class, reader::refresh);

        TestCaches.publish(directory, STORE, TestCaches.cache("another-store", "", TestCaches.entry(NAME, b64(2))));
        assertEquals(Verdict.TRUSTED, reader.verdict(NAME, digest(1), 0, NOW));
        assertTrue(reader.snapshot().problem().getMessage().endsWith("belongs to store 'another-store', not 'banking'"));

        TestCaches.publish(directory, STORE, TestCaches.cache(STORE, "", TestCaches.entry(NAME, b64(2))));
        assertEquals(Verdict.TRUSTED, reader.verdict(NAME, digest(2), 0, NOW));
        assertNull(reader.snapshot().problem());
    }

    @Test
    void anInvalidFileAtStartIsAnErrorNamingFileAndField() throws Exception {
        String[][] broken = {
            {TestCaches.cache(STORE, "", TestCaches.entry(NAME, "AAAA")), "fingerprints[0].fingerprint is not the base64 of a 32-byte SHA-256 digest"},
            {TestCaches.cache(STORE, "", TestCaches.entry(NAME, b64(1).replace("=", ""))), "fingerprints[0].fingerprint is not the base64"},
            {TestCaches.cache(STORE, "", TestCaches.entry(NAME, b64(1), -1, -2)), "fingerprints[0].depth is negative"},
            {TestCaches.cache(STORE, "", TestCaches.entry(NAME, b64(1)).replace("4000000000", "4.5")), "fingerprints[0].expires is not an integer"},
            {TestCaches.cache(STORE, "", "{\"fingerprint\": \"" + b64(1) + "\", \"expires\": 1}"), "fingerprints[0].name is missing"},
            {TestCaches.cache(STORE, "").replace("\"format\": 1", "\"format\": 2"), "unsupported cache format 2"},
            {"{\"fingerprints\": []}", "the \"pinkeeper\" metadata object is missing"},
            {"[]", "the document is not an object"},
            {TestCaches.cache(STORE, "") + "{}", "not valid JSON"},
        };
        for (String[] example : broken) {
            TestCaches.publish(directory, STORE, example[0]);
            CacheReaderException error = assertThrows(CacheReaderException.class,
                    () -> CacheReader.forStore(STORE, directory, null, null), example[1]);
            assertEquals(CacheReaderException.Kind.INVALID, error.kind());
            assertTrue(error.getMessage().startsWith(directory.resolve("banking.json") + " is not a pinkeeper cache file: " + example[1]),
                    error.getMessage());
        }
    }

    @Test
    void aDirectoryInPlaceOfTheFileIsUnreadable() throws Exception {
        Files.createDirectory(directory.resolve(STORE + ".json"));
        CacheReaderException error = assertThrows(CacheReaderException.class, () -> CacheReader.forStore(STORE, directory, null, null));
        assertEquals(CacheReaderException.Kind.UNREADABLE, error.kind());
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
