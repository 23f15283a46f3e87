package pinkeeper.reader;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

/**
 * The files of one case of {@code Tests/Conformance/cases.json}, as its README says a runner
 * writes them: a fresh directory (mode 0755 or {@code directory_mode}), the cache as
 * {@code banking.json} replaced by rename with its mode set first, the fallback file beside it.
 * {@code substitutions} replace fingerprints in every file written (the command-line runner puts
 * the fingerprints of certificates it made in place of the case's).
 */
final class CaseFiles implements AutoCloseable {
    static final String STORE = "banking";
    static final ObjectMapper JSON = new ObjectMapper();

    final JsonNode testCase;
    final Path directory;
    final Path fallback; // null: no fallback file given
    final List<String> expectedNames; // null: none configured
    private final Map<String, String> substitutions;

    CaseFiles(JsonNode testCase, Map<String, String> substitutions) throws IOException {
        this.testCase = testCase;
        this.substitutions = substitutions;
        directory = Files.createTempDirectory("pinkeeper-conformance-");
        TestCaches.setMode(directory, mode("directory_mode", 0755));
        if (testCase.has("fallback")) {
            fallback = directory.resolve("fallback.json");
            TestCaches.publish(directory, "fallback.json", substituted(JSON.writeValueAsBytes(testCase.get("fallback"))),
                    mode("fallback_mode", 0644));
        } else {
            fallback = testCase.path("fallback_missing").asBoolean() ? directory.resolve("missing-fallback.json") : null;
        }
        if (testCase.has("expected_common_names")) {
            expectedNames = new ArrayList<>();
            for (JsonNode name : testCase.get("expected_common_names")) expectedNames.add(name.asText());
        } else {
            expectedNames = null;
        }
    }

    /** Opens the library's reader on the case's directory. */
    CacheReader open() throws CacheReaderException {
        return CacheReader.forStore(STORE, directory, fallback, expectedNames);
    }

    /** The case's last cache version ({@code cache}, {@code cache_text} or {@code cache_base64}), or null for none. */
    byte[] lastVersion() throws IOException {
        byte[] version = testCase.has("cache") ? JSON.writeValueAsBytes(testCase.get("cache"))
                : testCase.has("cache_text") ? testCase.get("cache_text").asText().getBytes(StandardCharsets.UTF_8)
                : testCase.has("cache_base64") ? Base64.getDecoder().decode(testCase.get("cache_base64").asText()) : null;
        return version == null ? null : substituted(version);
    }

    byte[] previousVersion() throws IOException {
        return substituted(JSON.writeValueAsBytes(testCase.get("previous_cache")));
    }

    /** Publishes {@code version} as the store's cache file with {@code mode}. */
    void publish(byte[] version, int mode) throws IOException {
        TestCaches.publish(directory, STORE + ".json", version, mode);
    }

    /** Makes a hard link named {@code name} to the store's cache file, as a backup tool that links files does. */
    void linkCache(String name) throws IOException {
        Files.createLink(directory.resolve(name), directory.resolve(STORE + ".json"));
    }

    /** Writes the last version with its {@code cache_mode}, or deletes the file when the case has none. */
    void publishLast() throws IOException {
        byte[] version = lastVersion();
        if (version == null) Files.deleteIfExists(directory.resolve(STORE + ".json"));
        else publish(version, mode("cache_mode", 0644));
    }

    int mode(String member, int otherwise) {
        return testCase.has(member) ? Integer.parseInt(testCase.get(member).asText(), 8) : otherwise;
    }

    private byte[] substituted(byte[] content) {
        if (substitutions.isEmpty()) return content;
        // Latin-1 maps bytes one to one, so content that is not UTF-8 survives the replacement.
        String text = new String(content, StandardCharsets.ISO_8859_1);
        for (Map.Entry<String, String> entry : substitutions.entrySet()) text = text.replace(entry.getKey(), entry.getValue());
        return text.getBytes(StandardCharsets.ISO_8859_1);
    }

    @Override
    public void close() throws IOException {
        try (Stream<Path> paths = Files.walk(directory)) {
            for (Path path : paths.sorted(Comparator.reverseOrder()).toList()) Files.delete(path);
        }
    }
}
