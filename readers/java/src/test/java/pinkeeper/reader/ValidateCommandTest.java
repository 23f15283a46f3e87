package pinkeeper.reader;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code validate}: the output and exit statuses of {@code pinkeeper validate}, in process and through {@code java -jar}. */
class ValidateCommandTest {
    record Result(int status, String out, String err) {}

    @TempDir
    Path directory;

    String pinnedB64 = CacheReaderTest.b64(1);

    @BeforeEach
    void publish() throws Exception {
        TestCaches.publish(directory, "banking", TestCaches.cache("banking", "",
                TestCaches.entry("api.example.com", pinnedB64),
                TestCaches.entry("api.example.com", CacheReaderTest.b64(2), TestCaches.FAR_FUTURE, 1)));
    }

    Result run(String... arguments) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int status = ValidateCommand.run(arguments, new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
        return new Result(status, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    Result validate(String... more) {
        List<String> arguments = new ArrayList<>(List.of("validate", "--cache-directory", directory.toString(), "--store", "banking"));
        arguments.addAll(List.of(more));
        return run(arguments.toArray(String[]::new));
    }

    @Test
    void theThreeVerdictsAndTheirExitStatuses() {
        assertEquals(new Result(0, "trusted\n", ""), validate("--name", "api.example.com", "--fingerprint", pinnedB64));
        assertEquals(new Result(1, "untrusted: store 'banking' pins 'api.example.com', but not this certificate\n", ""),
                validate("--name", "api.example.com", "--fingerprint", CacheReaderTest.b64(3)));
        assertEquals(new Result(2, "empty: store 'banking' has no valid pin for 'other.example.com'; reject, and run "
                + "`pinkeeper update --store banking`\n", ""), validate("--name", "other.example.com", "--fingerprint", pinnedB64));
    }

    @Test
    void anEmptyNameIsAUsageError() {
        Result result = validate("--name", "", "--fingerprint", pinnedB64);
        assertEquals(64, result.status(), result.toString());
        assertTrue(result.err().startsWith("pinkeeper: usage: --name must be the host a client connects to, not empty\n"), result.err());
        assertEquals("", result.out());
    }

    @Test
    void depthHexAndExpectedNames() {
        String hex = HexFormat.ofDelimiter(":").withUpperCase().formatHex(CacheReaderTest.digest(2));
        assertEquals(0, validate("--name", "api.example.com", "--fingerprint", hex, "--depth", "1").status());
        assertEquals(1, validate("--name", "api.example.com", "--fingerprint", hex).status());
        assertEquals(new Result(1, "untrusted: 'api.example.com' is not among the expected_common_names of store 'banking'\n", ""),
                validate("--name", "api.example.com", "--fingerprint", pinnedB64, "--expected-common-name", "www.example.com"));
    }

    @Test
    void aCertificateFileIsCheckedThenListed() throws Exception {
        TestPki.Issued leaf = new TestPki(Files.createDirectory(directory.resolve("pki")))
                .selfSigned("leaf", "www.example.com", "selfsigned");
        TestCaches.publish(directory, "banking",
                TestCaches.cache("banking", "", TestCaches.entry("api.example.com", leaf.fingerprintBase64())));
        Result result = validate("--name", "api.example.com", "--certificate", leaf.certificateFile().toString());
        long notAfter = leaf.certificate().getNotAfter().getTime() / 1000;
        assertEquals(new Result(0, "trusted\ndepth 0: CN=www.example.com  sha256 " + leaf.fingerprintBase64() + "  expires " + notAfter
                + " ("
                + java.time.Instant.ofEpochSecond(notAfter) + ")\nnote: the leaf's common name 'www.example.com' differs from --name "
                + "'api.example.com': pins under either are compared, and pinning is skipped only if domainsConfig exempts both\n", ""),
                result);
    }

    @Test
    void theHostDecidesAndACertificatesCommonNameOnlyAddsPins() throws Exception {
        TestPki maker = new TestPki(Files.createDirectory(directory.resolve("pki")));
        TestPki.Issued exempt = maker.selfSigned("exempt", "unlisted.example", "selfsigned");
        TestPki.Issued wildcard = maker.selfSigned("wildcard", "*.example.com", "selfsigned");
        TestCaches.publish(directory, "banking", TestCaches.cache("banking",
                "  \"domainsConfig\": {\"sslPinningRequiredForUnlisted\": false, \"domains\": ["
                        + "{\"name\": \"api.example.com\", \"sslPinningRequired\": true}]},\n",
                TestCaches.entry("api.example.com", pinnedB64), TestCaches.entry("*.example.com", wildcard.fingerprintBase64())));

        // The mis-issued certificate: for api.example.com, with a CN that domainsConfig exempts.
        Result result = validate("--name", "api.example.com", "--certificate", exempt.certificateFile().toString());
        assertEquals(1, result.status(), result.out());
        assertTrue(result.out().startsWith("untrusted: store 'banking' pins 'api.example.com'"
                + " (certificate common name 'unlisted.example'), "
                + "but not this certificate\n"), result.out());
        // Without a certificate H alone decides, and it is exempt here.
        assertEquals(new Result(0, "trusted\n", ""), validate("--name", "unlisted.example", "--fingerprint", exempt.fingerprintBase64()));

        // Pins under the leaf's CN match; with --fingerprint there is no CN, so they do not.
        assertEquals(0, validate("--name", "API.example.com", "--certificate", wildcard.certificateFile().toString()).status());
        assertEquals(new Result(1, "untrusted: store 'banking' pins 'api.example.com', but not this certificate\n", ""),
                validate("--name", "api.example.com", "--fingerprint", wildcard.fingerprintBase64()));

        // Expected names admit H or N.
        assertEquals(0, validate("--name", "api.example.com", "--certificate", wildcard.certificateFile().toString(),
                "--expected-common-name", "*.EXAMPLE.com").status());
        Result refused = validate("--name", "localhost", "--certificate", exempt.certificateFile().toString(),
                "--expected-common-name", "api.example.com");
        assertTrue(refused.out().startsWith("untrusted: 'localhost' (certificate common name 'unlisted.example') is not among the "
                + "expected_common_names of store 'banking'\n"), refused.out());
    }

    @Test
    void usageErrorsExitWith64() {
        String[][] wrong = {
            {"--name", "api.example.com"},
            {"--name", "api.example.com", "--fingerprint", pinnedB64, "--certificate", "x.pem"},
            {"--name", "api.example.com", "--certificate", "x.pem", "--depth", "1"},
            {"--name", "api.example.com", "--fingerprint", pinnedB64, "--depth", "-1"},
            {"--name", "api.example.com", "--fingerprint", "AAAA"},
            {"--name", "api.example.com", "--fingerprint", pinnedB64, "--colour"},
        };
        for (String[] arguments : wrong) {
            Result result = validate(arguments);
            assertEquals(64, result.status(), String.join(" ", arguments));
            assertTrue(result.err().startsWith("pinkeeper: ") && result.err().contains("usage:"), result.err());
        }
        assertEquals(64, run("validate", "--store", "../etc/passwd", "--name", "a", "--fingerprint", pinnedB64).status());
        assertEquals(64, run("status").status());
    }

    @Test
    void unusableFilesExitWith65_66And74() throws Exception {
        assertEquals(66, validate("--name", "api.example.com", "--certificate", directory.resolve("missing.pem").toString()).status());
        Files.writeString(directory.resolve("garbage.pem"), "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n");
        assertEquals(65, validate("--name", "api.example.com", "--certificate", directory.resolve("garbage.pem").toString()).status());
        TestCaches.publish(directory, "banking", "not json");
        Result invalid = validate("--name", "api.example.com", "--fingerprint", pinnedB64);
        assertEquals(65, invalid.status());
        assertEquals("pinkeeper: not-json: store 'banking': " + directory.resolve("banking.json")
                + " is not a pinkeeper cache file: not valid JSON\n", invalid.err());
        Files.delete(directory.resolve("banking.json"));
        Files.createDirectory(directory.resolve("banking.json"));
        Result directoryThere = validate("--name", "api.example.com", "--fingerprint", pinnedB64);
        assertEquals(74, directoryThere.status());
        assertTrue(directoryThere.err().startsWith("pinkeeper: not-regular-file: store 'banking': "), directoryThere.err());
    }

    @Test
    void aRefusedHostSpellingIsUntrustedAndSaysWhy() {
        Result result = validate("--name", "0:0:0:0:0:0:0:1%lo", "--fingerprint", pinnedB64);
        assertEquals(new Result(1, "untrusted: --name '0:0:0:0:0:0:0:1%lo' has no one form (a short or padded IPv4 address, a zone id,"
                + " an empty label, a dot IDNA maps...), so no pin is looked up for it: give the host as clients name it\n", ""), result);
        assertEquals(0, validate("--name", "API.EXAMPLE.COM.", "--fingerprint", pinnedB64).status());
    }

    @Test
    void theJarRunsWithJavaDashJar() throws Exception {
        // make test-java builds the jar first and names it; Maven runs tests before it packages.
        String built = System.getProperty("pinkeeper.jar");
        assumeTrue(built != null, "no -Dpinkeeper.jar: the jar is tested by make test-java");
        Path jar = Paths.get(built);
        assertTrue(Files.isRegularFile(jar), "the reader jar is missing: " + jar);
        Path java = Paths.get(System.getProperty("java.home"), "bin", "java");
        int[] expected = {0, 1};
        String[] fingerprints = {pinnedB64, CacheReaderTest.b64(3)};
        for (int index = 0; index < 2; index++) {
            Process process = new ProcessBuilder(java.toString(), "-jar", jar.toString(), "validate", "--cache-directory",
                    directory.toString(), "--store", "banking", "--name", "api.example.com", "--fingerprint", fingerprints[index])
                    .redirectErrorStream(true).start();
            String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertTrue(process.waitFor(60, TimeUnit.SECONDS));
            assertEquals(expected[index], process.exitValue(), output);
            assertTrue(output.startsWith(index == 0 ? "trusted\n" : "untrusted: "), output);
        }
    }

    @Test
    void aNonAsciiNameIsReadAsTheUtf8ItWasGivenInAnyLocale() throws Exception {
        String built = System.getProperty("pinkeeper.jar");
        assumeTrue(built != null, "no -Dpinkeeper.jar: the jar is tested by make test-java");
        TestCaches.publish(directory, "banking", TestCaches.cache("banking",
                "  \"domainsConfig\": {\"sslPinningRequiredForUnlisted\": false, \"domains\": ["
                        + "{\"name\": \"xn--bcher-kva.example\", \"sslPinningRequired\": true}]},\n",
                TestCaches.entry("xn--bcher-kva.example", pinnedB64)));
        Path java = Paths.get(System.getProperty("java.home"), "bin", "java");
        // Under the C locale Java decodes argv as ASCII: bücher.example would be b??cher.example,
        // an unlisted name that domainsConfig leaves unpinned.
        for (String locale : List.of("C", "C.UTF-8")) {
            ProcessBuilder builder = new ProcessBuilder(java.toString(), "-jar", built, "validate", "--cache-directory",
                    directory.toString(), "--store", "banking", "--name", "b\u00fccher.example", "--fingerprint", CacheReaderTest.b64(3))
                    .redirectErrorStream(true);
            builder.environment().put("LC_ALL", locale);
            builder.environment().put("LANG", locale);
            Process process = builder.start();
            String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertTrue(process.waitFor(60, TimeUnit.SECONDS));
            assertEquals(1, process.exitValue(), locale + ": " + output);
            assertEquals("untrusted: store 'banking' pins 'xn--bcher-kva.example', but not this certificate\n", output, locale);
        }
    }

    @Test
    void helpSaysPinsOfARemovedKeyStillCountAndTheyDo() throws Exception {
        // The file names the key that verified each pin, not the keys still configured: a pin of a key
        // the operator has since removed decides here until the daemon rewrites the file without it.
        String kept = "{\"name\": \"api.example.com\", \"fingerprint\": \"" + pinnedB64 + "\", \"expires\": "
                + TestCaches.FAR_FUTURE + ", \"key\": \"3f1c0c6a9b2e4d71\"}";
        String removed = "{\"name\": \"api.example.com\", \"fingerprint\": \"" + CacheReaderTest.b64(3) + "\", \"expires\": "
                + TestCaches.FAR_FUTURE + ", \"key\": \"0123456789abcdef\"}";
        TestCaches.publish(directory, "banking", TestCaches.cache("banking", "", kept, removed));
        for (String fingerprint : List.of(pinnedB64, CacheReaderTest.b64(3))) {
            assertEquals(new Result(0, "trusted\n", ""), validate("--name", "api.example.com", "--fingerprint", fingerprint));
        }
        for (List<String> asked : List.of(List.of("--help"), List.of("validate", "--help"))) {
            Result help = run(asked.toArray(String[]::new));
            assertEquals(0, help.status(), help.toString());
            String text = help.out().replaceAll("\\s+", " ");
            assertTrue(text.contains("Reads no configuration: after a signing key is removed from the daemon's configuration, its pins"
                    + " and its domainsConfig still decide here until the daemon drops them from the file"), text);
            assertTrue(text.contains("`pinkeeper validate` without --cache-directory counts only what the configured keys vouch for"),
                    text);
        }
    }

    // The shared table (Tests/Conformance/cases.json): every options row and every case's
    // expected_command, through the command's entry point with the case's "now".

    @TestFactory
    Stream<DynamicTest> everyOptionsRowOfTheTable() throws Exception {
        JsonNode table = ConformanceTest.table();
        JsonNode cache = table.get("options_cache");
        long now = cache.get("now").asLong();
        return ConformanceTest.each(table.get("options"), "options row", row -> {
            Path cacheDirectory = Files.createTempDirectory(directory, "options-");
            byte[] content = CaseFiles.JSON.writeValueAsBytes(cache.get("cache"));
            TestCaches.publish(cacheDirectory, cache.get("store").asText() + ".json", content, 0644);
            List<String> arguments = new ArrayList<>(List.of("validate", "--cache-directory", cacheDirectory.toString(),
                    "--store", cache.get("store").asText()));
            for (JsonNode argument : row.get("args")) arguments.add(argument.asText());
            assertCommand(row.get("expected_command"), run(now, arguments), row.get("id").asText());
        });
    }

    @TestFactory
    Stream<DynamicTest> everyCasesCommandOutcome() throws Exception {
        CaseCertificates certificates = new CaseCertificates(Files.createDirectory(directory.resolve("case-certificates")));
        return ConformanceTest.each(ConformanceTest.table().get("cases"), "case", testCase -> playCommand(testCase, certificates));
    }

    /** The case's last files and question, as the README's command-line runner gives them. */
    void playCommand(JsonNode testCase, CaseCertificates certificates) throws Exception {
        JsonNode question = testCase.get("question");
        Map<String, String> substitutions = new HashMap<>();
        Path certificate = certificateFor(testCase, certificates, substitutions);
        try (CaseFiles files = new CaseFiles(testCase, substitutions)) {
            files.publishLast();
            List<String> arguments = new ArrayList<>(List.of("validate", "--cache-directory", files.directory.toString(),
                    "--store", CaseFiles.STORE, "--name", question.get("name").asText()));
            if (certificate != null) {
                arguments.addAll(List.of("--certificate", certificate.toString()));
            } else {
                arguments.addAll(List.of("--fingerprint", question.get("fingerprint").asText()));
                if (question.has("depth")) arguments.addAll(List.of("--depth", question.get("depth").asText()));
            }
            if (files.fallback != null) arguments.addAll(List.of("--fallback-file", files.fallback.toString()));
            if (files.expectedNames != null) {
                if (files.expectedNames.isEmpty()) arguments.addAll(List.of("--expected-common-name", ""));
                for (String name : files.expectedNames) arguments.addAll(List.of("--expected-common-name", name));
            }
            assertCommand(testCase.get("expected_command"), run(testCase.get("now").asLong(), arguments), testCase.get("id").asText());
        }
    }

    /**
     * The certificate file for a question with a chain, a common name or a PEM (null for a bare
     * fingerprint), with the case's fingerprints mapped to those of the certificates made for it.
     */
    Path certificateFor(JsonNode testCase, CaseCertificates certificates, Map<String, String> substitutions) throws Exception {
        JsonNode question = testCase.get("question");
        String id = testCase.get("id").asText();
        if (question.has("certificate_pem")) {
            Path file = directory.resolve(id + ".pem");
            Files.writeString(file, question.get("certificate_pem").asText());
            return file;
        }
        if (!question.has("verified_chain") && !question.has("common_name")) return null;
        String commonName = question.has("common_name") ? question.get("common_name").asText() : null;
        List<String> fingerprints = new ArrayList<>();
        if (question.has("verified_chain")) {
            for (JsonNode fingerprint : question.get("verified_chain")) fingerprints.add(fingerprint.asText());
        } else {
            assertEquals(0, question.path("depth").asInt(0), id + ": a common name goes with a leaf");
            fingerprints.add(question.get("fingerprint").asText());
        }
        TestPki.Issued[] chain = new TestPki.Issued[fingerprints.size()];
        for (int position = 0; position < chain.length; position++) {
            chain[position] = position == 0 ? certificates.leaf(commonName) : certificates.atPosition(position);
            String earlier = substitutions.put(fingerprints.get(position), chain[position].fingerprintBase64());
            assertEquals(null, earlier, id + ": a fingerprint twice in one chain");
        }
        return certificates.chainFile(id, chain);
    }

    Result run(long now, List<String> arguments) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int status = ValidateCommand.run(arguments.toArray(String[]::new), new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8), () -> now);
        return new Result(status, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    /**
     * Status and word as the README reads them: for 0–2 the first word of standard output (the
     * verdict's line; with --certificate the chain follows it), else the word after
     * "pinkeeper: " on standard error's first line.
     */
    static void assertCommand(JsonNode expected, Result result, String id) {
        assertEquals(expected.get("status").asInt(), result.status(), id + ": " + result);
        String word;
        if (result.status() <= 2) {
            word = result.out().split("\n", 2)[0].split("[: ]", 2)[0];
            assertEquals("", result.err(), id);
        } else {
            String first = result.err().split("\n", 2)[0];
            assertTrue(first.startsWith("pinkeeper: "), id + ": " + result);
            word = first.substring("pinkeeper: ".length()).split(":", 2)[0];
            assertEquals("", result.out(), id);
        }
        assertEquals(expected.get("word").asText(), word, id + ": " + result);
    }
}
