package pinkeeper.reader;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Answers "may I trust this TLS peer?" for a long-running process, from one store's published
 * cache file ({@code <cache_directory>/<store>.json}) plus the store's fallback pins, with
 * Wultra's semantics.
 *
 * <p>Every question first {@code stat}s the file; it is read and parsed again only when its
 * device and inode, size or modification time changed (the daemon replaces it atomically, so a
 * new version always has a new inode). When a new version cannot be used, the reader keeps
 * answering from the last good one and says why in {@link #snapshot()}. Safe to share between
 * threads.
 */
public final class CacheReader {
    /** Where the daemon publishes when its configuration does not say otherwise. */
    public static final String DEFAULT_CACHE_DIRECTORY = "/var/cache/pinkeeper";

    /** A cache file is a few hundred bytes per pin; anything this large is not one. */
    static final long MAXIMUM_FILE_SIZE = 64L << 20;

    private final Path path;
    private final String store;
    private final List<String> expectedCommonNames;
    private final List<Pin> fallbackPins;
    private Loaded loaded; // guarded by this

    /**
     * Opens a cache file. A missing file is not an error (the daemon may not have published yet:
     * every answer is then {@code EMPTY} unless fallback pins exist); an unreadable or invalid
     * one is.
     *
     * @param store when not null, the file's {@code pinkeeper.store} must name this store
     * @param expectedCommonNames the store's {@code expected_common_names}, or null
     */
    public CacheReader(Path path, String store, List<Pin> fallbackPins, List<String> expectedCommonNames)
            throws CacheReaderException {
        this.path = path;
        this.store = store;
        this.fallbackPins = List.copyOf(fallbackPins);
        this.expectedCommonNames = expectedCommonNames == null ? null : List.copyOf(expectedCommonNames);
        Loaded first = Loaded.initial(this.fallbackPins).refreshed(FileState.of(path), this);
        if (first.problem != null) throw first.problem;
        this.loaded = first;
    }

    /**
     * Opens {@code <cacheDirectory>/<store>.json} with the pins of the store's {@code fallback_file}
     * (null: none) and its {@code expected_common_names} (null: any name).
     */
    public static CacheReader forStore(String store, Path cacheDirectory, Path fallbackFile,
                                       List<String> expectedCommonNames) throws CacheReaderException {
        List<Pin> fallback = fallbackFile == null ? List.of() : readFallback(fallbackFile);
        return new CacheReader(cacheDirectory.resolve(store + ".json"), store, fallback, expectedCommonNames);
    }

    /** {@link #forStore(String, Path, Path, List)} in {@value #DEFAULT_CACHE_DIRECTORY}, no fallback, any name. */
    public static CacheReader forStore(String store) throws CacheReaderException {
        return forStore(store, Paths.get(DEFAULT_CACHE_DIRECTORY), null, null);
    }

    public Path path() { return path; }

    public String store() { return store; }

    /** The store's expected common names, or null when any name may be pinned. */
    public List<String> expectedCommonNames() { return expectedCommonNames; }

    // Questions

    /** Checks one certificate fingerprint (raw SHA-256 of its DER) at {@code depth} (0 = leaf). */
    public Verdict verdict(String commonName, byte[] fingerprint, long depth, long now) {
        return current().validator(commonName, expectedCommonNames).validate(commonName, fingerprint, depth, now);
    }

    public Verdict verdict(String commonName, byte[] fingerprint, long depth) {
        return verdict(commonName, fingerprint, depth, now());
    }

    /**
     * Checks the SHA-256 digests of a chain, leaf first. Give the <em>verified</em> chain (as
     * {@link PinningTrustManager} does), never merely the certificates a server presented: a
     * server may append any certificate it likes.
     */
    public Verdict verdictForChainDigests(String commonName, List<byte[]> chainDigests, long now) {
        return current().validator(commonName, expectedCommonNames).validateChain(commonName, chainDigests, now);
    }

    /** Checks a verified chain of certificates, leaf first (see {@link #verdictForChainDigests}). */
    public Verdict verdictForChain(String commonName, List<X509Certificate> verifiedChain, long now) {
        return verdictForChainDigests(commonName, Certificates.digests(verifiedChain), now);
    }

    public Verdict verdictForChain(String commonName, List<X509Certificate> verifiedChain) {
        return verdictForChain(commonName, verifiedChain, now());
    }

    /** The current time in Unix seconds, as the pins' {@code expires}. */
    public static long now() {
        return System.currentTimeMillis() / 1000;
    }

    // Inspection

    /** What the reader answers from: the cache file (null while none exists) and why a newer version was not used. */
    public record Snapshot(CacheFile cache, List<Pin> fallbackPins, CacheReaderException problem) {
        /** Cached pins in force, then fallback pins, that are not expired at {@code now}. */
        public List<Pin> validPins(long now) {
            List<Pin> pins = new ArrayList<>(cache == null ? List.of() : cache.pinsInForce());
            pins.addAll(fallbackPins);
            pins.removeIf(pin -> pin.isExpired(now));
            return pins;
        }
    }

    /** Looks at the file (reloading it if it changed) and returns what answers are based on. */
    public Snapshot snapshot() {
        Loaded state = current();
        return new Snapshot(state.cache, fallbackPins, state.problem);
    }

    /** Looks at the file now and throws if its current version cannot be used. */
    public void refresh() throws CacheReaderException {
        Loaded state = current();
        if (state.problem != null) throw state.problem;
    }

    private synchronized Loaded current() {
        FileState observed = FileState.of(path);
        if (!observed.equals(loaded.observed)) loaded = loaded.refreshed(observed, this);
        return loaded;
    }

    // Files

    /** Reads a Wultra fallback list ({@code {"fingerprints": [...]}}); its {@code domainsConfig} is ignored, as the mobile clients do. */
    public static List<Pin> readFallback(Path path) throws CacheReaderException {
        byte[] data = readFile(path);
        if (data == null) throw new CacheReaderException(CacheReaderException.Kind.UNREADABLE, path.toString(), "does not exist");
        try {
            return PinList.parse(data).pins();
        } catch (PinListException e) {
            throw new CacheReaderException(CacheReaderException.Kind.INVALID, path.toString(),
                    "is not a Wultra fingerprint list: " + e.reason());
        }
    }

    /** Reads and checks a cache file; null when it does not exist. */
    public static CacheFile readCacheFile(Path path, String store) throws CacheReaderException {
        byte[] data = readFile(path);
        return data == null ? null : parse(data, path, store);
    }

    private static CacheFile parse(byte[] data, Path path, String store) throws CacheReaderException {
        CacheFile cache;
        try {
            cache = CacheFile.parse(data);
        } catch (PinListException e) {
            throw new CacheReaderException(CacheReaderException.Kind.INVALID, path.toString(),
                    "is not a pinkeeper cache file: " + e.reason());
        }
        if (store != null && !cache.metadata().store().equals(store)) {
            throw new CacheReaderException(CacheReaderException.Kind.INVALID, path.toString(),
                    "belongs to store '" + cache.metadata().store() + "', not '" + store + "'");
        }
        return cache;
    }

    /** The whole file, or null when it does not exist. */
    private static byte[] readFile(Path path) throws CacheReaderException {
        String name = path.toString();
        if (Files.exists(path) && !Files.isRegularFile(path)) {
            throw new CacheReaderException(CacheReaderException.Kind.UNREADABLE, name, "is not a regular file");
        }
        try (InputStream input = Files.newInputStream(path)) {
            byte[] data = input.readNBytes((int) MAXIMUM_FILE_SIZE + 1);
            if (data.length > MAXIMUM_FILE_SIZE) {
                throw new CacheReaderException(CacheReaderException.Kind.INVALID, name, "is larger than " + MAXIMUM_FILE_SIZE + " bytes");
            }
            return data;
        } catch (NoSuchFileException e) {
            return null;
        } catch (IOException e) {
            throw new CacheReaderException(CacheReaderException.Kind.UNREADABLE, name, "cannot be read: " + e.getMessage());
        }
    }

    /** The parsed state: the file version it came from and its pins indexed by name. */
    private static final class Loaded {
        final FileState observed; // null before the first look
        final CacheFile cache;
        final Map<String, List<Pin>> byName; // pins in force, then fallback pins
        final CacheReaderException problem;

        Loaded(FileState observed, CacheFile cache, Map<String, List<Pin>> byName, CacheReaderException problem) {
            this.observed = observed;
            this.cache = cache;
            this.byName = byName;
            this.problem = problem;
        }

        static Loaded initial(List<Pin> fallback) {
            return new Loaded(null, null, index(null, fallback), null);
        }

        /**
         * The state after looking at the file again. A missing file means no cached pins; a file
         * that cannot be used leaves the last good pins in place and records why. The identity
         * kept is the one observed before reading, so a replacement racing with the read is
         * noticed (and read) at the next question.
         */
        Loaded refreshed(FileState now, CacheReader reader) {
            switch (now.kind()) {
                case MISSING:
                    return new Loaded(now, null, index(null, reader.fallbackPins), null);
                case FAILED:
                    return new Loaded(now, cache, byName, new CacheReaderException(CacheReaderException.Kind.UNREADABLE,
                            reader.path.toString(), "cannot be examined: " + now.failure()));
                default:
                    try {
                        byte[] data = readFile(reader.path);
                        if (data == null) return new Loaded(FileState.MISSING, null, index(null, reader.fallbackPins), null);
                        CacheFile next = parse(data, reader.path, reader.store);
                        return new Loaded(now, next, index(next, reader.fallbackPins), null);
                    } catch (CacheReaderException e) {
                        return new Loaded(now, cache, byName, e);
                    }
            }
        }

        private static Map<String, List<Pin>> index(CacheFile cache, List<Pin> fallback) {
            Map<String, List<Pin>> byName = new HashMap<>();
            List<Pin> all = new ArrayList<>(cache == null ? List.of() : cache.pinsInForce());
            all.addAll(fallback);
            for (Pin pin : all) byName.computeIfAbsent(pin.name(), key -> new ArrayList<>()).add(pin);
            return byName;
        }

        /**
         * Only the pins for {@code commonName} take part: the validator answers {@code EMPTY}
         * both for an empty store and for one without a live pin for the name, so the smaller
         * list gives the same answer.
         */
        PinValidator validator(String commonName, List<String> expected) {
            return new PinValidator(byName.getOrDefault(commonName, List.of()), expected,
                    cache == null ? null : cache.domainsConfigInForce());
        }
    }
}
