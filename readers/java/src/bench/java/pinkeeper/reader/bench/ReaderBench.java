package pinkeeper.reader.bench;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;

import pinkeeper.reader.CacheReader;
import pinkeeper.reader.Verdict;

/**
 * Java reader benchmark (docs/performance.md "How cost grows"), not a test: the same 2,000-pin
 * store and the same questions as scripts/bench-reader-python.py and readers/go/bench_test.go.
 * Prints the cost of one question on an unchanged file (its stat included) and of the first
 * question after the file was replaced (stat, read, parse, index), each after an untimed warm-up
 * of the JIT. Run by scripts/bench-reader-java.sh [SECONDS].
 */
public final class ReaderBench {
    private static final int NAMES = 1000;
    private static final long NOW = 1763770000L;
    private static final int WARM_UP_QUESTIONS = 200_000;
    private static final int WARM_UP_RELOADS = 200;
    private static final long WARM_UP_NANOS = 2_000_000_000L;

    private record Question(String host, byte[] fingerprint) {}

    private ReaderBench() {}

    private static byte[] digest(int i, int j) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(("cert-" + i + "-" + j).getBytes(StandardCharsets.US_ASCII));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    private static String hostName(int i) {
        return String.format("host%04d.example.com", i);
    }

    private static byte[] cacheFile(long updated) {
        List<String> entries = new ArrayList<>();
        for (int i = 0; i < NAMES; i++) {
            for (int j = 0; j < 2; j++) {
                entries.add(String.format("    {\"name\": \"%s\", \"fingerprint\": \"%s\", \"expires\": %d}",
                        hostName(i), Base64.getEncoder().encodeToString(digest(i, j)), 4102444800L - j * 86400L));
            }
        }
        return ("{\n  \"fingerprints\": [\n" + String.join(",\n", entries) + "\n  ],\n"
                + "  \"pinkeeper\": {\"format\": 1, \"store\": \"bench\", \"source\": \"https://pins.example.com/bench\", "
                + "\"updated\": " + updated + ", \"nextUpdate\": 4102000000}\n}\n").getBytes(StandardCharsets.UTF_8);
    }

    /** Publishes data as the daemon does: a new file renamed over the old one (a new inode). */
    private static void replace(Path file, byte[] data) throws IOException {
        Path temporary = file.resolveSibling(file.getFileName() + ".tmp");
        Files.write(temporary, data);
        Files.move(temporary, file, StandardCopyOption.ATOMIC_MOVE);
    }

    /** A third trusted, a third untrusted, a third for a name without pins. */
    private static List<Question> questions() {
        byte[] other = new byte[32];
        Arrays.fill(other, (byte) 0xEE);
        List<Question> list = new ArrayList<>();
        for (int index = 0; index < 999; index++) {
            int i = (index * 7) % NAMES;
            int j = index % 2;
            list.add(switch (index % 3) {
                case 0 -> new Question(hostName(i), digest(i, j));
                case 1 -> new Question(hostName(i), other);
                default -> new Question("unknown-" + index + ".example.com", digest(i, j));
            });
        }
        return list;
    }

    private static void expectTrusted(Verdict verdict) {
        if (verdict != Verdict.TRUSTED) throw new AssertionError("the first question is not trusted: " + verdict);
    }

    /** The mean cost of one question over {@code seconds}, in µs; the verdicts' ordinals are summed so that none is dead code. */
    private static double verdictCost(CacheReader reader, List<Question> list, double seconds, long[] sink) {
        long count = 0;
        long start = System.nanoTime();
        long limit = (long) (seconds * 1e9);
        while (System.nanoTime() - start < limit) {
            for (Question q : list) sink[0] += reader.verdict(q.host(), q.fingerprint(), 0, NOW).ordinal();
            count += list.size();
        }
        return (System.nanoTime() - start) / 1e3 / count;
    }

    /** The mean cost of the first question after a replacement over {@code seconds} (at least {@code atLeast} reloads), in ms. */
    private static double reloadCost(CacheReader reader, Path file, Question first, double seconds, int atLeast)
            throws IOException {
        byte[][] versions = {cacheFile(NOW + 1), cacheFile(NOW + 2)};
        long spent = 0;
        int reloads = 0;
        long start = System.nanoTime();
        long limit = (long) (seconds * 1e9);
        while (reloads < atLeast || System.nanoTime() - start < limit) {
            replace(file, versions[reloads % 2]);
            long t = System.nanoTime();
            Verdict verdict = reader.verdict(first.host(), first.fingerprint(), 0, NOW);
            spent += System.nanoTime() - t;
            expectTrusted(verdict);
            reloads++;
        }
        return spent / 1e6 / reloads;
    }

    public static void main(String[] args) throws Exception {
        double seconds = args.length > 0 ? Double.parseDouble(args[0]) : 3;
        Path directory = Files.createTempDirectory("pinkeeper-bench-");
        try {
            Path file = directory.resolve("bench.json");
            replace(file, cacheFile(NOW));
            CacheReader reader = new CacheReader(file, "bench", List.of(), null);
            List<Question> list = questions();
            expectTrusted(reader.verdict(list.get(0).host(), list.get(0).fingerprint(), 0, NOW));
            long[] sink = {0};
            // Warm-up, untimed: enough questions and reloads for C2 to compile both paths, and
            // long enough for its compiler threads to finish on a busy machine.
            long start = System.nanoTime();
            for (int n = 0; n < WARM_UP_QUESTIONS || System.nanoTime() - start < WARM_UP_NANOS; n += list.size()) {
                for (Question q : list) sink[0] += reader.verdict(q.host(), q.fingerprint(), 0, NOW).ordinal();
            }
            reloadCost(reader, file, list.get(0), WARM_UP_NANOS / 2e9, WARM_UP_RELOADS);
            double question = verdictCost(reader, list, seconds, sink);
            System.out.printf("java: verdict, 2,000 pins, unchanged file (stat included): %.2f µs per question (goal <= 2)%n", question);
            double reload = reloadCost(reader, file, list.get(0), seconds, 1);
            System.out.printf("java: first question after the file was replaced, 2,000 pins: %.2f ms (goal <= 5)%n", reload);
            System.out.printf("java: warm-up of at least %,d questions and 2 s, then %d reloads and 1 s, before timing; checksum %d%n",
                    WARM_UP_QUESTIONS, WARM_UP_RELOADS, sink[0]);
        } finally {
            try (Stream<Path> files = Files.walk(directory)) {
                for (Path p : files.sorted(Comparator.reverseOrder()).toList()) Files.deleteIfExists(p);
            }
        }
    }
}
