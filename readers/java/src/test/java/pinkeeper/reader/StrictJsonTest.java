package pinkeeper.reader;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** Strict JSON beyond the conformance table: the reason each refusal gives, and what stays accepted. */
class StrictJsonTest {
    static final String DIGEST = "AQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQE=";
    static final String META = "\"pinkeeper\": {\"format\": 1, \"store\": \"banking\", \"source\": \"s\", \"updated\": 1, "
            + "\"nextUpdate\": 2}";
    static final String ENTRY = "\"name\": \"a\", \"fingerprint\": \"" + DIGEST + "\", \"expires\": 1";

    static String document(String entry, String extra) {
        return "{\"fingerprints\": [{" + entry + "}], " + extra + META + "}";
    }

    static byte[] bytes(Object... parts) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (Object part : parts) out.writeBytes(part instanceof String text ? text.getBytes(StandardCharsets.UTF_8) : (byte[]) part);
        return out.toByteArray();
    }

    static void assertRefused(String reason, byte[] data) {
        PinListException refused = assertThrows(PinListException.class, () -> CacheFile.parse(data));
        assertTrue(refused.reason().contains(reason), "reason: " + refused.reason());
    }

    static void assertRefused(String reason, String text) {
        assertRefused(reason, text.getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void aKnownMemberGivenTwiceIsNamed() {
        assertRefused("fingerprints[0].name appears more than once", document("\"name\": \"b\", " + ENTRY, ""));
        assertRefused("fingerprints appears more than once", "{\"fingerprints\": [], \"fingerprints\": [], " + META + "}");
        assertRefused("pinkeeper appears more than once", document(ENTRY, "\"pinkeeper\": {}, "));
        assertRefused("pinkeeper.mode appears more than once",
                document(ENTRY, "").replace("\"updated\"", "\"mode\": null, \"mode\": null, \"updated\""));
        assertRefused("fingerprints[0].signature appears more than once",
                document(ENTRY + ", \"signature\": \"x\", \"signature\": \"x\"", ""));
        assertRefused("domainsConfig.domains[0].name appears more than once", document(ENTRY,
                "\"domainsConfig\": {\"sslPinningRequiredForUnlisted\": true, "
                        + "\"domains\": [{\"name\": \"a\", \"name\": \"a\", \"sslPinningRequired\": true}]}, "));
    }

    @Test
    void stringsAndBytes() {
        assertRefused("a lone surrogate escape", document(ENTRY, "\"x\": \"\\ud800\", "));
        assertRefused("a lone surrogate escape", document(ENTRY, "\"\\udc00\": 1, "));
        // A repeated member nobody reads is skipped, but each of its values is still checked.
        assertRefused("a lone surrogate escape", document(ENTRY, "\"x\": \"\\ud800\", \"x\": 1, "));
        assertRefused("byte order mark", bytes(new byte[] {(byte) 0xEF, (byte) 0xBB, (byte) 0xBF}, document(ENTRY, "")));
        assertRefused("invalid UTF-8",
                bytes("{\"fingerprints\": [], \"x\": \"", new byte[] {(byte) 0xF4, (byte) 0x90, (byte) 0x80, (byte) 0x80},
                        "\", " + META + "}"));
        assertRefused("not valid JSON", document(ENTRY, "\"x\": -Infinity, "));
    }

    @Test
    void integersAndNesting() {
        assertRefused("pinkeeper.updated is not an integer", document(ENTRY, "").replace("\"updated\": 1", "\"updated\": 1e0"));
        assertRefused("fingerprints[0].expires is not an integer",
                document(ENTRY.replace("\"expires\": 1", "\"expires\": " + "9".repeat(30)), ""));
        assertRefused("nested deeper than 512 levels", document(ENTRY, "\"x\": " + "[".repeat(512) + "]".repeat(512) + ", "));
        assertRefused("nested deeper than 512 levels", document(ENTRY, "\"x\": " + "{\"a\": [".repeat(100_000)));
    }

    @Test
    void whatStaysAccepted() throws PinListException {
        String repeatedUnknown = document("\"x\": 1, \"x\": [2], " + ENTRY, "\"x\": \"\\ud83d\\ude00\", \"x\": {}, ");
        assertEquals("a", CacheFile.parse(repeatedUnknown.getBytes(StandardCharsets.UTF_8)).list().pins().get(0).name());
        // Beyond 64 bits where no field is read: skipped like any value. (Jackson builds that limit
        // numbers to 1000 characters refuse longer ones: see docs/readers.md.)
        String hugeUnknown = document(ENTRY, "\"x\": " + "9".repeat(900) + ", \"y\": -0, ");
        assertEquals(1, CacheFile.parse(hugeUnknown.getBytes(StandardCharsets.UTF_8)).list().pins().get(0).expires());
        String deep = document(ENTRY + ", \"depth\": -0", "\"x\": " + "[".repeat(511) + "]".repeat(511) + ", ");
        assertEquals(0, CacheFile.parse(deep.getBytes(StandardCharsets.UTF_8)).list().pins().get(0).depth());
    }
}
