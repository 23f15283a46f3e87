package pinkeeper.reader;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.security.cert.CertificateException;
import java.security.cert.X509Certificate;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.function.LongSupplier;
import java.util.regex.Pattern;

/**
 * {@code java -jar pinkeeper-reader.jar validate ...}: the answer of {@code pinkeeper validate}
 * from this reader, with the same output and exit statuses (0 trusted, 1 untrusted, 2 empty,
 * 64 usage, 65 bad data, 66 certificate file missing or unreadable, 74 cache file unreadable).
 * {@code --name} is the host H (docs/protocol.md, "the host decides"); with {@code --certificate} the leaf's common
 * name is N, with {@code --fingerprint} there is no certificate and H alone decides.
 */
public final class ValidateCommand {
    static final String USAGE = "usage: java -jar pinkeeper-reader.jar validate [--cache-directory DIR] --store ID --name HOST\n"
            + "           (--fingerprint B64 [--depth N] | --certificate FILE)\n"
            + "           [--fallback-file FILE] [--expected-common-name CN]...";
    /**
     * What --help adds to the usage. What the daemon drops when a signing key leaves its configuration cannot be told from
     * the file: it names the key that verified each pin and domainsConfig, not the keys still configured.
     */
    static final String HELP = USAGE + "\n\n"
            + "Answers trusted, untrusted or empty for a certificate of a host from the published cache, as pinkeeper validate does.\n"
            + "Reads no configuration: after a signing key is removed from the daemon's configuration, its pins and its\n"
            + "domainsConfig still decide here until the daemon drops them from the file (when it starts or reloads, or at\n"
            + "`pinkeeper update`); the file names the key that verified each, not the keys still configured.\n"
            + "`pinkeeper validate` without --cache-directory counts only what the configured keys vouch for.\n"
            + "Exit status: 0 trusted; 1 untrusted; 2 empty (reject, and update the store); 64 usage error; 65 bad data;\n"
            + "66 certificate file missing or unreadable; 74 cache or fallback file unreadable.";
    private static final Pattern STORE_ID = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0,63}");
    private static final Pattern DEPTH = Pattern.compile("[0-9]{1,9}");
    private static final Pattern HEX_PLAIN = Pattern.compile("[0-9A-Fa-f]{64}");
    private static final Pattern HEX_PAIRS = Pattern.compile("[0-9A-Fa-f]{2}(:[0-9A-Fa-f]{2}){31}");

    /** Thrown to end the command with an exit status after a message. */
    static final class Exit extends Exception {
        private static final long serialVersionUID = 1L;
        final int status;

        Exit(int status, String message) {
            super(message);
            this.status = status;
        }
    }

    private final PrintStream out;
    private final LongSupplier clock;
    private String cacheDirectory = CacheReader.DEFAULT_CACHE_DIRECTORY;
    private String store;
    private String name;
    private String fingerprint;
    private String depth;
    private String certificate;
    private String fallbackFile;
    private final List<String> expectedNames = new ArrayList<>();

    private ValidateCommand(PrintStream out, LongSupplier clock) {
        this.out = out;
        this.clock = clock;
    }

    public static void main(String[] args) {
        String[] arguments = CommandArguments.utf8(args);
        if (arguments == null) {
            System.err.println("pinkeeper: usage: the arguments hold characters this locale's encoding cannot carry, and they cannot"
                    + " be read as UTF-8 from /proc/self/cmdline; run with a UTF-8 locale (LC_ALL=C.UTF-8)");
            System.exit(64);
        }
        System.exit(run(arguments, System.out, System.err));
    }

    /** Runs the command line and returns its exit status. */
    public static int run(String[] args, PrintStream out, PrintStream err) {
        return run(args, out, err, CacheReader::now);
    }

    /** Tests: the same, with "now" (Unix seconds) from {@code clock}; the command itself always uses the real time. */
    static int run(String[] args, PrintStream out, PrintStream err, LongSupplier clock) {
        try {
            if (args.length > 0 && (args[0].equals("--help") || args[0].equals("-h"))) {
                out.println(HELP);
                return 0;
            }
            if (args.length == 0 || !args[0].equals("validate")) throw usage("the only command is 'validate'");
            ValidateCommand command = new ValidateCommand(out, clock);
            if (command.parse(args)) {
                out.println(HELP);
                return 0;
            }
            return command.execute();
        } catch (Exit exit) {
            // The first word after "pinkeeper: " is what scripts act on: "usage" or the file's error code.
            err.println("pinkeeper: " + (exit.status == 64 ? "usage: " : "") + exit.getMessage());
            if (exit.status == 64) err.println(USAGE);
            return exit.status;
        } finally {
            out.flush();
        }
    }

    private static Exit usage(String message) {
        return new Exit(64, message);
    }

    /** Reads the options; true when help was asked for. */
    private boolean parse(String[] args) throws Exit {
        for (int index = 1; index < args.length; index++) {
            String option = args[index];
            String value = null;
            int equals = option.indexOf('=');
            if (option.startsWith("--") && equals > 0) {
                value = option.substring(equals + 1);
                option = option.substring(0, equals);
            }
            if (option.equals("--help") || option.equals("-h")) return true;
            if (value == null) {
                if (index + 1 >= args.length) throw usage("missing value for " + option);
                value = args[++index];
            }
            switch (option) {
                case "--cache-directory" -> cacheDirectory = value;
                case "--store" -> store = value;
                case "--name" -> name = value;
                case "--fingerprint" -> fingerprint = value;
                case "--depth" -> depth = value;
                case "--certificate" -> certificate = value;
                case "--fallback-file" -> fallbackFile = value;
                case "--expected-common-name" -> expectedNames.add(value);
                default -> throw usage("unknown option '" + option + "'");
            }
        }
        if (store == null) throw usage("missing --store");
        if (!STORE_ID.matcher(store).matches()) {
            throw usage("--store must match [A-Za-z0-9][A-Za-z0-9._-]{0,63}, not '" + store + "'");
        }
        if (name == null) throw usage("missing --name");
        if (name.isEmpty()) throw usage("--name must be the host a client connects to, not empty");
        if ((fingerprint == null) == (certificate == null)) throw usage("give exactly one of --fingerprint or --certificate");
        if (depth != null) {
            if (fingerprint == null) throw usage("--depth goes with --fingerprint (a chain's depths are its positions)");
            if (parseDepth(depth) < 0) {
                throw usage("--depth must be one to nine ASCII digits (0 is the leaf), not '" + PinName.escaped(depth) + "'");
            }
        }
        if (fingerprint != null && digest(fingerprint) == null) {
            throw usage("--fingerprint must be the padded standard base64 (44 characters) or the hex (64 digits, plain or as 32"
                    + " colon-separated pairs) of a 32-byte SHA-256 digest, not '" + PinName.escaped(fingerprint) + "'");
        }
        return false;
    }

    private int execute() throws Exit {
        CacheReader reader;
        try {
            reader = CacheReader.forStore(store, Paths.get(cacheDirectory), fallbackFile == null ? null : Paths.get(fallbackFile),
                    expectedNames.isEmpty() ? null : expectedNames);
        } catch (CacheReaderException e) {
            throw new Exit(e.kind().exitStatus(), e.code() + ": store '" + store + "': " + e.getMessage());
        }
        Verdict verdict;
        PeerNames names;
        List<X509Certificate> chain = null;
        if (fingerprint != null) {
            names = PeerNames.host(name);
            verdict = reader.verdict(names, digest(fingerprint), depth == null ? 0 : parseDepth(depth), clock.getAsLong());
        } else {
            chain = readChain(Paths.get(certificate));
            // The file stands for a verified chain: its leaf's common name is N.
            names = new PeerNames(name, Certificates.commonName(chain.get(0)));
            verdict = reader.verdictForChain(names, chain, clock.getAsLong());
        }
        String described = names.described();
        switch (verdict) {
            case TRUSTED -> out.println("trusted");
            case UNTRUSTED -> {
                if (names.hostRefused()) {
                    out.println("untrusted: --name '" + PinName.escaped(name) + "' has no one form (a short or padded IPv4 address,"
                            + " a zone id, an empty label, a dot IDNA maps...), so no pin is looked up for it:"
                            + " give the host as clients name it");
                } else if (!reader.admits(names)) {
                    out.println("untrusted: " + described + " is not among the expected_common_names of store '" + store + "'");
                } else {
                    out.println("untrusted: store '" + store + "' pins " + described + ", but not this certificate");
                }
            }
            case EMPTY -> out.println("empty: store '" + store + "' has no valid pin for " + described
                    + "; reject, and run `pinkeeper update --store " + store + "`");
        }
        // The verdict first, as every reader's command prints it; then what the file holds.
        if (chain != null) printChain(chain);
        return verdict.exitStatus();
    }

    /**
     * The certificates of a file as given, leaf first. Like {@code pinkeeper validate
     * --certificate}, this checks an operator's file: it is no verified chain, so a service must
     * use {@link PinningTrustManager} instead.
     */
    private static List<X509Certificate> readChain(Path path) throws Exit {
        byte[] data;
        try {
            data = Files.readAllBytes(path);
        } catch (NoSuchFileException e) {
            throw new Exit(66, "certificate file " + path + " does not exist");
        } catch (IOException e) {
            throw new Exit(66, "certificate file " + path + " cannot be read (check its permissions)");
        }
        try {
            return Certificates.read(data);
        } catch (CertificateException e) {
            throw new Exit(65, "certificate file " + path + ": " + e.getMessage());
        }
    }

    /** One line per certificate: what an operator needs to write a list entry for it. */
    private void printChain(List<X509Certificate> chain) {
        for (int index = 0; index < chain.size(); index++) {
            X509Certificate certificate = chain.get(index);
            String subject = Certificates.subject(certificate);
            long notAfter = certificate.getNotAfter().getTime() / 1000;
            out.println("depth " + index + ": " + (subject.isEmpty() ? "(empty subject)" : PinName.escaped(subject))
                    + "  sha256 " + Certificates.fingerprintBase64(certificate)
                    + "  expires " + notAfter + " (" + Instant.ofEpochSecond(notAfter).truncatedTo(ChronoUnit.SECONDS) + ")");
        }
        String leafName = chain.isEmpty() ? null : Certificates.commonName(chain.get(0));
        if (leafName != null && !PinName.same(leafName, name)) {
            out.println("note: the leaf's common name '" + PinName.escaped(leafName) + "' differs from --name '" + PinName.escaped(name)
                    + "': pins under either are compared, and pinning is skipped only if domainsConfig exempts both");
        }
    }

    /** One to nine ASCII digits (leading zeros allowed: no sign, space, {@code _} or other script's digits); -1 otherwise. */
    private static long parseDepth(String text) {
        if (!DEPTH.matcher(text).matches()) return -1;
        return Long.parseLong(text);
    }

    /**
     * 32 bytes from padded standard base64 (44 characters) or hex: 64 digits, plain or as 32
     * colon-separated pairs (as {@code openssl x509 -fingerprint} prints). Null for anything else.
     */
    static byte[] digest(String text) {
        if (text.length() == 44) return PinList.decodeDigest(text);
        if (!HEX_PLAIN.matcher(text).matches() && !HEX_PAIRS.matcher(text).matches()) return null;
        String hex = text.replace(":", "");
        byte[] bytes = new byte[32];
        for (int index = 0; index < 32; index++) {
            bytes[index] = (byte) Integer.parseInt(hex.substring(2 * index, 2 * index + 2), 16);
        }
        return bytes;
    }
}
