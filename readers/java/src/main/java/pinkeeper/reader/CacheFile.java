package pinkeeper.reader;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.List;
import java.util.Set;

/** A store's published cache file: a Wultra list plus pinkeeper's metadata object {@code pinkeeper}. */
public record CacheFile(PinList list, Metadata metadata) {
    public static final int FORMAT_VERSION = 1;

    /** The modes this version reads; the names are compared exactly. */
    private static final Set<String> KNOWN_MODES = Set.of("static", "challenge");

    /**
     * The {@code pinkeeper} object. {@code mode} is {@code "static"}, {@code "challenge"} or null
     * when the daemon that wrote the file did not say.
     */
    public record Metadata(long format, String store, String source, long updated, long nextUpdate, String mode) {}

    /** Reads a cache file's bytes: the list must satisfy {@link PinList#parse}, the metadata be complete. */
    public static CacheFile parse(byte[] json) throws PinListException {
        JsonNode root = JsonFields.parseObject(json);
        PinList list = PinList.parse(root);
        JsonNode node = JsonFields.optional(root, "pinkeeper", "pinkeeper");
        if (node == null) {
            throw new PinListException(CacheReaderException.Code.MISSING_METADATA, "the \"pinkeeper\" metadata object is missing");
        }
        JsonFields.object(node, "pinkeeper");
        Metadata metadata = new Metadata(
                JsonFields.integer(node, "format", "pinkeeper.format"),
                JsonFields.string(node, "store", "pinkeeper.store"),
                JsonFields.string(node, "source", "pinkeeper.source"),
                JsonFields.integer(node, "updated", "pinkeeper.updated"),
                JsonFields.integer(node, "nextUpdate", "pinkeeper.nextUpdate"),
                mode(node));
        // Every member is type-checked first: a file this version cannot read at all is invalid
        // content whatever its format says; one that is well-formed but newer is unsupported.
        if (metadata.format() != FORMAT_VERSION) {
            throw new PinListException(CacheReaderException.Code.UNSUPPORTED_FORMAT, "pinkeeper.format is " + metadata.format()
                    + ", a cache format this reader does not read (only " + FORMAT_VERSION + "): update the reader");
        }
        if (metadata.mode() != null && !KNOWN_MODES.contains(metadata.mode())) {
            // Never read as static: an unknown mode may mean anything, so nothing of the file is used.
            throw new PinListException(CacheReaderException.Code.UNSUPPORTED_FORMAT, "pinkeeper.mode is '"
                    + PinName.escaped(metadata.mode()) + "', a mode this reader does not know (static, challenge): update the reader");
        }
        return new CacheFile(list, metadata);
    }

    private static String mode(JsonNode metadata) throws PinListException {
        JsonNode mode = JsonFields.optional(metadata, "mode", "pinkeeper.mode");
        return mode == null ? null : JsonFields.asString(mode, "pinkeeper.mode");
    }

    /**
     * Whether only the signed part of each entry may be used. A static list's signatures cover
     * {@code name&fingerprint&expires}, not {@code depth} or {@code domainsConfig}, so anyone who
     * could alter the list in transit could have set those. (A mode this reader does not know
     * never gets here: such a file is refused as unsupported-format.)
     */
    public boolean onlySignedFieldsCount() {
        return "static".equals(metadata.mode());
    }

    /** The pins that take part in validation: in a static store only the depth-0 ones. */
    public List<Pin> pinsInForce() {
        if (!onlySignedFieldsCount()) return list.pins();
        return list.pins().stream().filter(pin -> pin.depth() == 0).toList();
    }

    /** The {@code domainsConfig} that takes part in validation: none in a static store. */
    public DomainsConfig domainsConfigInForce() {
        return onlySignedFieldsCount() ? null : list.domainsConfig();
    }
}
