package pinkeeper.reader;

import java.io.IOException;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.OpenOption;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.PosixFileAttributes;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Answers "may I trust this TLS peer?" for a long-running process, from one store's published
 * cache file ({@code <cache_directory>/<store>.json}) plus the store's fallback pins, with
 * Wultra's semantics as docs/protocol.md ("the host decides") reads them: by the host the client verified (H) and the
 * leaf's common name (N), see {@link PeerNames} and {@link PinValidator}.
 *
 * <p>Every question first {@code stat}s the file; it is read and parsed again only when its
 * device and inode, size or modification time changed (the daemon replaces it atomically, so a
 * new version always has a new inode). When a new version cannot be used, the reader keeps
 * answering from the last good one and says why in {@link #snapshot()}. Safe to share between
 * threads: a question never waits for another one's reading; while one question reads a new
 * version, the others answer from the last good one.
 */
public final class CacheReader {
    /** Where the daemon publishes when its configuration does not say otherwise. */
    public static final String DEFAULT_CACHE_DIRECTORY = "/var/cache/pinkeeper";

    /** A cache file is a few hundred bytes per pin; anything this large is not one. */
    static final long MAXIMUM_FILE_SIZE = 64L << 20;

    private final Path path;
    private final String store;
    private final List<String> expectedCommonNames;
    private final Set<String> expectedNames; // folded, for lookups; null: any name
    private final List<Pin> fallbackPins;
    private final Opener opener;
    private final Object lock = new Object();
    private Loaded loaded;       // guarded by lock
    private boolean refreshing;  // guarded by lock: a question is reading a new version, outside the lock

    /** Tests: how long a question waits for the cache file to open. */
    volatile long openTimeoutMillis = OPEN_TIMEOUT_MILLIS;
    /** Tests: run after the type check, just before the open (where a FIFO can be swapped in). */
    volatile Runnable beforeOpen;

    /**
     * Opens a cache file. A missing file is not an error (the daemon may not have published yet:
     * every answer is then {@code EMPTY} unless fallback pins exist); an unreadable or invalid
     * one is, and so is anything but a regular file at the path (a symlink is never followed).
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
        this.expectedNames = PinValidator.folded(expectedCommonNames);
        this.opener = new Opener(path);
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
    //
    // Every question names H, the host the client connected to and had its TLS stack verify the
    // certificate for (never a name taken from the certificate alone), and, when the chain is
    // known, N, the leaf's common name: docs/protocol.md, "the host decides". The methods that
    // take a String name ask about the host alone, except verdictForChain(String, List), which
    // has the leaf and so takes N from it. Names compare as PinName does.

    /** Checks one certificate fingerprint (raw SHA-256 of its DER) at {@code depth} (0 = leaf) of the verified chain. */
    public Verdict verdict(PeerNames names, byte[] fingerprint, long depth, long now) {
        return current().validator(names, expectedNames).validate(names, fingerprint, depth, now);
    }

    /** {@link #verdict(PeerNames, byte[], long, long)} for the host alone. */
    public Verdict verdict(String host, byte[] fingerprint, long depth, long now) {
        return verdict(PeerNames.host(host), fingerprint, depth, now);
    }

    public Verdict verdict(String host, byte[] fingerprint, long depth) {
        return verdict(host, fingerprint, depth, now());
    }

    /**
     * Checks the SHA-256 digests of a chain, leaf first. Give the <em>verified</em> chain (as
     * {@link PinningTrustManager} does), never merely the certificates a server presented: a
     * server may append any certificate it likes.
     */
    public Verdict verdictForChainDigests(PeerNames names, List<byte[]> chainDigests, long now) {
        return current().validator(names, expectedNames).validateChain(names, chainDigests, now);
    }

    /** {@link #verdictForChainDigests(PeerNames, List, long)} for the host alone. */
    public Verdict verdictForChainDigests(String host, List<byte[]> chainDigests, long now) {
        return verdictForChainDigests(PeerNames.host(host), chainDigests, now);
    }

    /** Checks a verified chain of certificates, leaf first, for the names given (see {@link #verdictForChainDigests}). */
    public Verdict verdictForChain(PeerNames names, List<X509Certificate> verifiedChain, long now) {
        return verdictForChainDigests(names, Certificates.digests(verifiedChain), now);
    }

    /** Checks a verified chain for {@code host}; the leaf's most specific common name is consulted as N. */
    public Verdict verdictForChain(String host, List<X509Certificate> verifiedChain, long now) {
        String commonName = verifiedChain.isEmpty() ? null : Certificates.commonName(verifiedChain.get(0));
        return verdictForChain(new PeerNames(host, commonName), verifiedChain, now);
    }

    public Verdict verdictForChain(String host, List<X509Certificate> verifiedChain) {
        return verdictForChain(host, verifiedChain, now());
    }

    /**
     * Whether the store's expected common names (if any) admit the host or the common name. When
     * they do not, every answer is {@code UNTRUSTED}; this tells that refusal from a pin mismatch.
     */
    public boolean admits(PeerNames names) {
        return PinValidator.admits(expectedNames, names.keys());
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

    /**
     * The state to answer from, after looking at the file. Only the question that finds a new
     * version reads it, outside the lock (the open may wait, see {@link Opener}); the others answer
     * from the last good state meanwhile. While an earlier open of the file has not returned,
     * nothing is read (no second open is started): the last good state answers, with the
     * problem recorded, and the file is looked at again at every question until that open returns.
     */
    private Loaded current() {
        FileState observed = FileState.of(path);
        Loaded base;
        synchronized (lock) {
            if (refreshing || observed.equals(loaded.observed)) return loaded;
            if (observed.kind() == FileState.Kind.FILE) {
                CacheReaderException blocked = opener.blocked();
                if (blocked != null) {
                    if (loaded.problem != blocked) loaded = loaded.withProblem(blocked);
                    return loaded;
                }
            }
            refreshing = true;
            base = loaded;
        }
        Loaded next = base;
        try {
            next = base.refreshed(observed, this);
        } finally {
            synchronized (lock) {
                loaded = next;
                refreshing = false;
            }
        }
        return next;
    }

    // Files

    /** Reads a Wultra fallback list ({@code {"fingerprints": [...]}}); its {@code domainsConfig} is ignored, as the mobile clients do. */
    public static List<Pin> readFallback(Path path) throws CacheReaderException {
        // Unlike a cache file it may be a symlink: the operator placed it, in a directory of theirs.
        byte[] data = readFile(path, true);
        if (data == null) {
            throw new CacheReaderException(CacheReaderException.Code.MISSING, path.toString(),
                    "does not exist: create the store's fallback file or remove fallback_file from its configuration");
        }
        try {
            return PinList.parse(data).pins();
        } catch (PinListException e) {
            throw new CacheReaderException(e.code(), path.toString(), "is not a Wultra fingerprint list: " + e.reason());
        }
    }

    /** Reads and checks a cache file; null when it does not exist. A symlink is refused, never followed. */
    public static CacheFile readCacheFile(Path path, String store) throws CacheReaderException {
        byte[] data = readFile(path, false);
        return data == null ? null : parse(data, path, store);
    }

    private static CacheFile parse(byte[] data, Path path, String store) throws CacheReaderException {
        CacheFile cache;
        try {
            cache = CacheFile.parse(data);
        } catch (PinListException e) {
            throw new CacheReaderException(e.code(), path.toString(), "is not a pinkeeper cache file: " + e.reason());
        }
        if (store != null && !cache.metadata().store().equals(store)) {
            throw new CacheReaderException(CacheReaderException.Code.WRONG_STORE, path.toString(), "belongs to store '"
                    + PinName.escaped(cache.metadata().store()) + "', not '" + store + "': check the store's cache_directory");
        }
        return cache;
    }

    /**
     * The whole file, or null when it does not exist. Only a regular file is read: a symlink at a
     * cache path (unless {@code followLinks}) would make the reader read whatever it points to,
     * and opening a FIFO blocks until some process opens it for writing. Java cannot open with
     * {@code O_NONBLOCK} as the Swift and Python readers do, so the type is checked first
     * (without following links) and the open itself, which a FIFO swapped in after that check
     * could still block, runs on a thread of its own that the caller waits for a bounded time
     * ({@link #open}; a reader's cache file through its {@link Opener}, one open at a time).
     */
    private static byte[] readFile(Path path, boolean followLinks) throws CacheReaderException {
        return readFile(path, followLinks, null);
    }

    /** {@code reader}: its cache file, opened through its {@link Opener}; null: a file read once (a new open). */
    private static byte[] readFile(Path path, boolean followLinks, CacheReader reader) throws CacheReaderException {
        String name = path.toString();
        LinkOption[] links = followLinks ? new LinkOption[0] : new LinkOption[] {LinkOption.NOFOLLOW_LINKS};
        BasicFileAttributes attributes = examine(path, links);
        if (attributes == null) return null;
        if (attributes.isSymbolicLink()) throw symlink(name);
        if (!attributes.isRegularFile()) throw notRegular(name);
        checkPermissions(path, followLinks, attributes);
        if (reader != null && reader.beforeOpen != null) reader.beforeOpen.run();
        byte[] data;
        try (FileChannel channel = reader == null ? open(path, followLinks, OPEN_TIMEOUT_MILLIS)
                : reader.opener.open(reader.openTimeoutMillis)) {
            if (channel == null) return null;
            data = Channels.newInputStream(channel).readNBytes((int) MAXIMUM_FILE_SIZE + 1);
        } catch (IOException e) {
            throw new CacheReaderException(CacheReaderException.Code.IO_ERROR, name, "cannot be read: " + e.getMessage());
        }
        if (data.length > MAXIMUM_FILE_SIZE) {
            throw new CacheReaderException(CacheReaderException.Code.TOO_LARGE, name, "is larger than " + MAXIMUM_FILE_SIZE
                    + " bytes, more than any cache file holds");
        }
        // The file read must be the one whose permissions were checked: Java cannot fstat the
        // descriptor, so the path is looked at again and must still hold that file.
        BasicFileAttributes after = examine(path, links);
        if (after == null || !java.util.Objects.equals(after.fileKey(), attributes.fileKey())) {
            throw new CacheReaderException(CacheReaderException.Code.IO_ERROR, name,
                    "was replaced while it was read; it is read again at the next question");
        }
        if (after instanceof PosixFileAttributes posix) FilePermissions.checkFile(posix, name);
        return data;
    }

    /** The file's attributes (POSIX ones where the file system has them), or null when it does not exist. */
    private static BasicFileAttributes examine(Path path, LinkOption[] links) throws CacheReaderException {
        try {
            try {
                return Files.readAttributes(path, PosixFileAttributes.class, links);
            } catch (UnsupportedOperationException e) {
                return Files.readAttributes(path, BasicFileAttributes.class, links);
            }
        } catch (NoSuchFileException e) {
            return null;
        } catch (IOException | SecurityException e) {
            throw new CacheReaderException(CacheReaderException.Code.IO_ERROR, path.toString(), "cannot be examined: " + e.getMessage());
        }
    }

    /**
     * Refuses a file that other users may write or replace ({@link FilePermissions}): the file, its
     * directory and, for a fallback file reached through a symlink, the directory of the link too,
     * since whoever may write that one may point the link elsewhere.
     */
    private static void checkPermissions(Path path, boolean followLinks, BasicFileAttributes attributes) throws CacheReaderException {
        String name = path.toString();
        if (attributes instanceof PosixFileAttributes posix) FilePermissions.checkFile(posix, name);
        Path absolute = path.toAbsolutePath();
        FilePermissions.checkDirectory(parent(absolute), name);
        if (followLinks && Files.isSymbolicLink(absolute)) {
            try {
                FilePermissions.checkDirectory(parent(absolute.toRealPath()), name);
            } catch (IOException | SecurityException e) {
                throw new CacheReaderException(CacheReaderException.Code.IO_ERROR, name, "cannot be examined: " + e.getMessage());
            }
        }
    }

    private static Path parent(Path absolute) {
        Path parent = absolute.getParent();
        return parent == null ? absolute.getRoot() : parent;
    }

    /** How long a question waits for the cache file to open: far longer than a local open ever takes. */
    static final long OPEN_TIMEOUT_MILLIS = 5_000;

    /**
     * Opens {@code path} for reading (with {@code O_NOFOLLOW} unless {@code followLinks}, so a
     * symlink swapped in after the check fails), waiting at most {@code timeoutMillis}; null when
     * the file vanished. Each call starts an open of its own: this is for files read once (the
     * fallback file, {@link #readCacheFile}); a reader opens its cache file through its
     * {@link Opener}, which never has more than one open outstanding.
     */
    static FileChannel open(Path path, boolean followLinks, long timeoutMillis) throws CacheReaderException {
        return await(startOpen(path, followLinks), path, followLinks, timeoutMillis);
    }

    /**
     * The open, on a daemon thread of its own (so that one left blocked on a FIFO never keeps the
     * JVM from exiting), named after the path. Java cannot open with {@code O_NONBLOCK}: an open
     * that meets a FIFO without a writer blocks in open(2) until some process opens it for
     * writing, and nothing else interrupts it. Whatever it opens after its caller gave up is closed.
     */
    private static CompletableFuture<FileChannel> startOpen(Path path, boolean followLinks) {
        Set<OpenOption> options = followLinks ? Set.of(StandardOpenOption.READ)
                : Set.of(StandardOpenOption.READ, LinkOption.NOFOLLOW_LINKS);
        CompletableFuture<FileChannel> opening = new CompletableFuture<>();
        Thread thread = new Thread(() -> {
            try {
                opening.complete(FileChannel.open(path, options));
            } catch (IOException | RuntimeException e) {
                opening.completeExceptionally(e);
            }
        }, "pinkeeper-cache-open: " + path);
        thread.setDaemon(true);
        thread.start();
        return opening;
    }

    /**
     * Waits at most {@code timeoutMillis} for {@code opening}. An open still blocked by then is left
     * to its thread, which closes what it opens if a writer ever comes: the question is answered
     * from the last good pins meanwhile. A FIFO that already had a writer opens at once; it is
     * refused before any read, because seeking fails on a pipe ({@code ESPIPE}) and never on a
     * regular file.
     */
    private static FileChannel await(CompletableFuture<FileChannel> opening, Path path, boolean followLinks, long timeoutMillis)
            throws CacheReaderException {
        String name = path.toString();
        FileChannel channel;
        try {
            channel = opening.get(timeoutMillis, TimeUnit.MILLISECONDS);
        } catch (TimeoutException | InterruptedException e) {
            opening.thenAccept(CacheReader::closeQuietly);
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
                throw new CacheReaderException(CacheReaderException.Code.IO_ERROR, name, "was not opened: interrupted");
            }
            throw new CacheReaderException(CacheReaderException.Code.IO_ERROR, name, "did not open within " + timeoutMillis
                    + " ms (a FIFO put in its place?)");
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof NoSuchFileException) return null;
            if (!followLinks && Files.isSymbolicLink(path)) throw symlink(name);
            throw new CacheReaderException(CacheReaderException.Code.IO_ERROR, name, "cannot be opened: " + cause.getMessage());
        }
        try {
            channel.position();
            return channel;
        } catch (IOException e) {
            closeQuietly(channel);
            throw notRegular(name);
        }
    }

    /**
     * A reader's opens of its cache file: at most one outstanding. An open blocked by a FIFO swapped
     * in after the type check stays blocked until a writer comes, which may be never (once the
     * FIFO is replaced, nothing can open it again); starting another open at each new version
     * would leave one more thread blocked each time. So while one has not returned, no other is
     * started and the reader keeps the last good pins.
     */
    private static final class Opener {
        private final Path path;
        private CompletableFuture<FileChannel> pending; // guarded by this: the last open started
        private CacheReaderException blocked;          // guarded by this: the problem recorded for it

        Opener(Path path) {
            this.path = path;
        }

        /** The problem to record while the last open has not returned, or null when none is outstanding. */
        synchronized CacheReaderException blocked() {
            if (pending == null || pending.isDone()) return null;
            if (blocked == null) {
                blocked = new CacheReaderException(CacheReaderException.Code.IO_ERROR, path.toString(),
                        "was not read again: an earlier open of it has not returned (a FIFO put in its place?); the last good pins"
                                + " stay in use until it does, which takes a writer opening that FIFO (or a restart of the process)");
            }
            return blocked;
        }

        /**
         * Opens the cache file ({@code O_NOFOLLOW}), waiting at most {@code timeoutMillis}; refuses while an earlier open is
         * outstanding.
         */
        FileChannel open(long timeoutMillis) throws CacheReaderException {
            CompletableFuture<FileChannel> opening;
            synchronized (this) {
                CacheReaderException problem = blocked();
                if (problem != null) throw problem;
                blocked = null;
                opening = startOpen(path, false);
                pending = opening;
            }
            return await(opening, path, false, timeoutMillis);
        }
    }

    private static void closeQuietly(FileChannel channel) {
        try {
            channel.close();
        } catch (IOException e) {
            // Nothing was read from it; the descriptor is released either way.
        }
    }

    private static CacheReaderException symlink(String name) {
        return new CacheReaderException(CacheReaderException.Code.SYMLINK, name, "is a symlink, which is never followed");
    }

    private static CacheReaderException notRegular(String name) {
        return new CacheReaderException(CacheReaderException.Code.NOT_REGULAR_FILE, name,
                "is not a regular file (a FIFO, device or directory?)");
    }

    /** The parsed state: the file version it came from and its pins indexed by name. */
    private static final class Loaded {
        final FileState observed; // null before the first look
        final CacheFile cache;
        final Map<String, List<Pin>> byName; // by PinName.fold(name): pins in force, then fallback pins
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

        /** The same pins, observed version and all, with {@code problem} recorded. */
        Loaded withProblem(CacheReaderException problem) {
            return new Loaded(observed, cache, byName, problem);
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
                    return new Loaded(now, cache, byName, new CacheReaderException(CacheReaderException.Code.IO_ERROR,
                            reader.path.toString(), "cannot be examined: " + now.failure()));
                default:
                    try {
                        byte[] data = readFile(reader.path, false, reader);
                        if (data == null) return new Loaded(FileState.MISSING, null, index(null, reader.fallbackPins), null);
                        CacheFile next = parse(data, reader.path, reader.store);
                        return new Loaded(now, next, index(next, reader.fallbackPins), null);
                    } catch (CacheReaderException e) {
                        // A version that was never opened (an earlier open is still blocked) is
                        // not refused: keep the version last read, so the file is looked at again.
                        return new Loaded(e == reader.opener.blocked() ? observed : now, cache, byName, e);
                    }
            }
        }

        private static Map<String, List<Pin>> index(CacheFile cache, List<Pin> fallback) {
            Map<String, List<Pin>> byName = new HashMap<>();
            List<Pin> all = new ArrayList<>(cache == null ? List.of() : cache.pinsInForce());
            all.addAll(fallback);
            for (Pin pin : all) byName.computeIfAbsent(pin.key(), key -> new ArrayList<>()).add(pin);
            return byName;
        }

        /**
         * Only the pins under the peer's names take part (at most two lookups): the validator
         * answers {@code EMPTY} both for an empty store and for one without a live pin for the
         * names, so the smaller list gives the same answer. The names differ once folded, so the
         * two lists never share a pin.
         */
        PinValidator validator(PeerNames names, Set<String> expected) {
            List<String> keys = names.keys();
            if (keys.isEmpty()) return PinValidator.withFoldedNames(List.of(), expected, null); // no H: untrusted
            List<Pin> pins = byName.getOrDefault(keys.get(0), List.of());
            if (keys.size() > 1) {
                pins = new ArrayList<>(pins);
                pins.addAll(byName.getOrDefault(keys.get(1), List.of()));
            }
            return PinValidator.withFoldedNames(pins, expected, cache == null ? null : cache.domainsConfigInForce());
        }
    }
}
