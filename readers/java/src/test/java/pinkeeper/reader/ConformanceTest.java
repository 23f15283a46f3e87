package pinkeeper.reader;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

/**
 * Every case of the shared table {@code Tests/Conformance/cases.json} (its README says how a
 * runner plays one), answered by this reader. The table is found from the repository root
 * (system property {@code pinkeeper.repository}, else the working directory and its parents);
 * {@code pinkeeper.conformance.cases} names another file.
 */
class ConformanceTest {
    static final String STORE = "banking";
    static final ObjectMapper JSON = new ObjectMapper();

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

    @TestFactory
    Stream<DynamicTest> everyCaseOfTheTable() throws Exception {
        Path file = casesFile();
        assertTrue(Files.isRegularFile(file), "the conformance table is missing: " + file);
        JsonNode table = JSON.readTree(file.toFile());
        assertEquals(1, table.path("format").asInt(), "cases.json format");
        List<DynamicTest> tests = new ArrayList<>();
        Set<String> ids = new HashSet<>();
        for (JsonNode testCase : table.path("cases")) {
            String id = testCase.path("id").asText();
            assertTrue(ids.add(id), "duplicate case id " + id);
            tests.add(DynamicTest.dynamicTest(id, () -> assertEquals(testCase.path("expected").asText(), play(testCase).label(),
                    id + ": " + testCase.path("rule").asText())));
        }
        assertTrue(tests.size() > 0, "the conformance table has no case");
        return tests.stream();
    }

    /** Plays one case in a directory of its own and returns the reader's answer to its question. */
    static Verdict play(JsonNode testCase) throws Exception {
        Path directory = Files.createTempDirectory("pinkeeper-conformance-");
        try {
            Path fallback = null;
            if (testCase.has("fallback")) {
                fallback = directory.resolve("fallback.json");
                Files.writeString(fallback, JSON.writeValueAsString(testCase.get("fallback")));
            }
            List<String> expected = null;
            if (testCase.has("expected_common_names")) {
                expected = new ArrayList<>();
                for (JsonNode name : testCase.get("expected_common_names")) expected.add(name.asText());
            }
            byte[] version = testCase.has("cache") ? JSON.writeValueAsBytes(testCase.get("cache"))
                    : testCase.has("cache_text") ? testCase.get("cache_text").asText().getBytes(StandardCharsets.UTF_8)
                    : testCase.has("cache_base64") ? Base64.getDecoder().decode(testCase.get("cache_base64").asText()) : null;
            long now = testCase.get("now").asLong();
            JsonNode question = testCase.get("question");

            if (testCase.has("previous_cache")) {
                TestCaches.publish(directory, STORE, JSON.writeValueAsString(testCase.get("previous_cache")));
            }
            // Opened before the version under test is written: an invalid first version is then a
            // refused update, not an error from the constructor.
            CacheReader reader = CacheReader.forStore(STORE, directory, fallback, expected);
            if (testCase.has("previous_cache")) {
                ask(reader, question, now);
                if (version == null) Files.delete(directory.resolve(STORE + ".json"));
            }
            if (version != null) TestCaches.publish(directory, STORE, version);
            return ask(reader, question, now);
        } finally {
            try (Stream<Path> files = Files.list(directory)) {
                for (Path path : files.toList()) Files.delete(path);
            }
            Files.delete(directory);
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
