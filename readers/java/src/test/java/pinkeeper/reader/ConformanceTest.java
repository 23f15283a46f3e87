package pinkeeper.reader;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;

/**
 * The whole shared table {@code Tests/Conformance/cases.json} (format 2; its README says how a
 * runner plays it), answered by this reader's library: its error codes, every host spelling, and
 * every case's verdict and error. The table is found from the repository root (system property
 * {@code pinkeeper.repository}, else the working directory and its parents);
 * {@code pinkeeper.conformance.cases} names another file. The command line plays the same table
 * in {@link ValidateCommandTest}.
 */
class ConformanceTest {
    static Path casesFile() {
        String explicit = System.getProperty("pinkeeper.conformance.cases");
        if (explicit != null) return Paths.get(explicit);
        String repository = System.getProperty("pinkeeper.repository");
        Path start = Paths.get(repository != null ? repository : System.getProperty("user.dir")).toAbsolutePath();
        for (Path directory = start; directory != null; directory = directory.getParent()) {
            Path candidate = directory.resolve("Tests/Conformance/cases.json");
            if (Files.isRegularFile(candidate)) return candidate;
        }
        return start.resolve("Tests/Conformance/cases.json");
    }

    static JsonNode table() throws Exception {
        Path file = casesFile();
        assertTrue(Files.isRegularFile(file), "the conformance table is missing: " + file);
        JsonNode table = CaseFiles.JSON.readTree(file.toFile());
        assertEquals(2, table.path("format").asInt(), "cases.json format");
        return table;
    }

    /** The cases, each under its id (checked unique), as dynamic tests. */
    static Stream<DynamicTest> each(JsonNode rows, String what, RowCheck check) {
        List<DynamicTest> tests = new ArrayList<>();
        Set<String> ids = new HashSet<>();
        for (JsonNode row : rows) {
            String id = row.path("id").asText();
            assertTrue(ids.add(id), "duplicate " + what + " id " + id);
            tests.add(DynamicTest.dynamicTest(id, () -> check.run(row)));
        }
        assertTrue(tests.size() > 0, "the conformance table has no " + what);
        return tests.stream();
    }

    interface RowCheck {
        void run(JsonNode row) throws Exception;
    }

    @Test
    void theReadersErrorCodesAreExactlyTheTables() throws Exception {
        Map<String, String> table = new TreeMap<>();
        table().get("error_codes").fields().forEachRemaining(code -> table.put(code.getKey(),
                code.getValue().get("kind").asText() + " " + code.getValue().get("status").asInt()));
        Map<String, String> reader = new TreeMap<>();
        for (CacheReaderException.Code code : CacheReaderException.Code.values()) {
            reader.put(code.label(), code.kind().name().toLowerCase(java.util.Locale.ROOT) + " " + code.kind().exitStatus());
        }
        assertEquals(table, reader);
    }

    @TestFactory
    Stream<DynamicTest> everyHostSpelling() throws Exception {
        return each(table().get("host_spellings"), "host spelling", row -> {
            JsonNode host = row.get("host");
            assertEquals(host.isNull() ? null : host.asText(), HostName.canonicalHost(row.get("spelling").asText()),
                    "the one form of '" + row.get("spelling").asText() + "'");
        });
    }

    @TestFactory
    Stream<DynamicTest> everyCaseOfTheTable() throws Exception {
        return each(table().get("cases"), "case", ConformanceTest::play);
    }

    /** Plays one case in a directory of its own: its verdict, then the error an explicit re-read reports. */
    static void play(JsonNode testCase) throws Exception {
        String rule = testCase.path("id").asText() + ": " + testCase.path("rule").asText();
        String expected = testCase.get("expected").asText();
        JsonNode expectedError = testCase.get("expected_error");
        long now = testCase.get("now").asLong();
        JsonNode question = testCase.get("question");
        try (CaseFiles files = new CaseFiles(testCase, Map.of())) {
            if (expected.equals("error")) {
                CacheReaderException error = assertThrows(CacheReaderException.class, files::open, rule);
                assertEquals(expectedError.asText(), error.code(), rule + ": " + error.getMessage());
                return;
            }
            CacheReader reader;
            if (testCase.has("previous_cache")) {
                files.publish(files.previousVersion(), 0644);
                if (testCase.path("previous_cache_linked").asBoolean(false)) files.linkCache("banking-backup.json");
                reader = files.open();
                ask(reader, question, now);
                files.publishLast();
            } else {
                // Opened before the version under test is written: an invalid first version is then a
                // refused update, not an error from the constructor.
                reader = files.open();
                if (files.lastVersion() != null) files.publishLast();
            }
            assertEquals(expected, ask(reader, question, now).label(), rule);
            if (expectedError == null) {
                assertDoesNotThrow(reader::refresh, rule);
            } else {
                CacheReaderException error = assertThrows(CacheReaderException.class, reader::refresh, rule);
                assertEquals(expectedError.asText(), error.code(), rule + ": " + error.getMessage());
            }
        }
    }

    /** H is {@code question.name}; N, when the case gives it, {@code question.common_name}. */
    static Verdict ask(CacheReader reader, JsonNode question, long now) throws Exception {
        PeerNames names = new PeerNames(question.get("name").asText(),
                question.has("common_name") ? question.get("common_name").asText() : null);
        if (question.has("verified_chain")) {
            List<byte[]> chain = new ArrayList<>();
            for (JsonNode fingerprint : question.get("verified_chain")) chain.add(decode(fingerprint.asText()));
            return reader.verdictForChainDigests(names, chain, now);
        }
        if (question.has("certificate_pem")) {
            byte[] pem = question.get("certificate_pem").asText().getBytes(StandardCharsets.US_ASCII);
            return reader.verdict(names, Certificates.fingerprint(Certificates.read(pem).get(0)), 0, now);
        }
        return reader.verdict(names, decode(question.get("fingerprint").asText()), question.path("depth").asLong(0), now);
    }

    static byte[] decode(String base64) {
        byte[] digest = PinList.decodeDigest(base64);
        if (digest == null) throw new IllegalArgumentException("not the base64 of a SHA-256 digest in the case: " + base64);
        return digest;
    }
}
