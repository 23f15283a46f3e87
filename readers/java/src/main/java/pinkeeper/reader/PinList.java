package pinkeeper.reader;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;

/**
 * A Wultra fingerprint list as served, bundled as fallback data or published in the cache:
 * {@code {"fingerprints": [...], "domainsConfig": {...}}}. Unknown members are ignored at every level.
 */
public record PinList(List<Pin> pins, DomainsConfig domainsConfig) {
    public PinList {
        pins = List.copyOf(pins);
    }

    /**
     * Parses and type-checks a list. Every entry needs a string {@code name}, a standard-base64
     * {@code fingerprint} of 32 bytes and an integer {@code expires}; {@code depth} is optional
     * (default 0, never negative); {@code signature} and {@code key}, when present, are strings
     * or null, as is {@code domainsConfig.key}.
     */
    public static PinList parse(byte[] json) throws PinListException {
        return parse(JsonFields.parseObject(json));
    }

    static PinList parse(JsonNode root) throws PinListException {
        JsonNode entries = JsonFields.array(root, "fingerprints", "fingerprints");
        List<Pin> pins = new ArrayList<>(entries.size());
        for (int index = 0; index < entries.size(); index++) {
            pins.add(entry(entries.get(index), "fingerprints[" + index + "]"));
        }
        JsonNode domains = JsonFields.optional(root, "domainsConfig", "domainsConfig");
        return new PinList(pins, domains == null ? null : domainsConfig(domains));
    }

    private static Pin entry(JsonNode node, String path) throws PinListException {
        JsonFields.object(node, path);
        String name = JsonFields.string(node, "name", path + ".name");
        byte[] digest = decodeDigest(JsonFields.string(node, "fingerprint", path + ".fingerprint"));
        if (digest == null) {
            throw new PinListException(path + ".fingerprint is not the base64 of a 32-byte SHA-256 digest");
        }
        long expires = JsonFields.integer(node, "expires", path + ".expires");
        JsonNode depthNode = JsonFields.optional(node, "depth", path + ".depth");
        long depth = depthNode == null ? 0 : JsonFields.asInteger(depthNode, path + ".depth");
        if (depth < 0) throw new PinListException(path + ".depth is negative");
        // Not used here, but checked as every reader checks them: string or null, at most once.
        JsonFields.optionalString(node, "signature", path + ".signature");
        JsonFields.optionalString(node, "key", path + ".key");
        return new Pin(name, digest, expires, depth);
    }

    private static DomainsConfig domainsConfig(JsonNode node) throws PinListException {
        JsonFields.object(node, "domainsConfig");
        boolean unlisted = JsonFields.bool(node, "sslPinningRequiredForUnlisted", "domainsConfig.sslPinningRequiredForUnlisted");
        JsonNode list = JsonFields.array(node, "domains", "domainsConfig.domains");
        JsonFields.optionalString(node, "key", "domainsConfig.key");
        List<DomainsConfig.Domain> domains = new ArrayList<>(list.size());
        for (int index = 0; index < list.size(); index++) {
            String path = "domainsConfig.domains[" + index + "]";
            JsonNode domain = JsonFields.object(list.get(index), path);
            domains.add(new DomainsConfig.Domain(JsonFields.string(domain, "name", path + ".name"),
                    JsonFields.bool(domain, "sslPinningRequired", path + ".sslPinningRequired")));
        }
        return new DomainsConfig(unlisted, domains);
    }

    /**
     * 32 bytes from strict standard base64: padded to a multiple of four, no URL-safe alphabet,
     * no whitespace (Java's basic decoder alone would also take unpadded text). Null otherwise.
     */
    static byte[] decodeDigest(String text) {
        if (text.length() % 4 != 0) return null;
        try {
            byte[] digest = Base64.getDecoder().decode(text);
            return digest.length == 32 ? digest : null;
        } catch (IllegalArgumentException e) {
            return null;
        }
    }
}
