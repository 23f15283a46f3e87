package pinkeeper.reader;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The host's one form beyond the table's rows ({@link ConformanceTest#everyHostSpelling} plays
 * those): RFC 3492's own examples, RFC 5952's choices, and what the trust manager compares it with.
 */
class HostNameTest {
    @Test
    void punycodeEncodesRfc3492sExamples() {
        // RFC 3492 section 7.1: (A) Arabic (Egyptian), (B) Chinese (simplified), (L) 3<nen>B<gumi><kinpachi><sensei>.
        assertEquals("egbpdaj6bu4bxfgehfvwxn", Punycode.encode(
                "\u0644\u064A\u0647\u0645\u0627\u0628\u062A\u0643\u0644\u0645\u0648\u0634\u0639\u0631\u0628\u064A\u061F"));
        assertEquals("ihqwcrb4cv8a8dqg056pqjye", Punycode.encode("\u4ED6\u4EEC\u4E3A\u4EC0\u4E48\u4E0D\u8BF4\u4E2D\u6587"));
        assertEquals("3B-ww4c5e180e575a65lsy2b", Punycode.encode("3\u5E74B\u7D44\u91D1\u516B\u5148\u751F"));
        assertEquals("bcher-kva", Punycode.encode("b\u00fccher"));
        // A scalar beyond the BMP counts once, not as two UTF-16 units.
        assertEquals("xn--ls8h.example", HostName.canonicalHost("\uD83D\uDCA9.example"));
    }

    @Test
    void ipv6IsWrittenAsRfc5952Says() {
        assertEquals("2001:db8::1:0:0:1", HostName.canonicalHost("2001:0db8:0000:0000:0001:0000:0000:0001"));
        assertEquals("::", HostName.canonicalHost("::"));
        assertEquals("::102:304", HostName.canonicalHost("::1.2.3.4")); // IPv4-compatible: no dotted part
        assertEquals("::ffff:0.0.0.0", HostName.canonicalHost("::ffff:0:0"));
        assertEquals("1:2:3:4:5:6:7:0", HostName.canonicalHost("1:2:3:4:5:6:7::")); // one zero group is written 0
        for (String refused : List.of("1:2:3:4:5:6:7:8::", "1::2:3:4:5:6:7:8", ":::", "1:2:3:4:5:6:7", "1.2.3.4::", "::1.2.3",
                "::\uFF11", "[]", "[::1", "::1]", "1:2:3:4:5:6:7:8:9", "::ffff:1.2.3.4.5", ":1::", "1::2:")) {
            assertNull(HostName.canonicalHost(refused), refused);
        }
    }

    @Test
    void namesKeepWhatIsNotAnAsciiCapital() {
        assertEquals("xn--elvin-r74b.example", HostName.canonicalHost("\u212Aelvin.example")); // the Kelvin sign is no K
        assertEquals("localhost", HostName.canonicalHost("LOCALHOST."));
        assertNull(HostName.canonicalHost("a\uD800.example")); // a lone surrogate is no scalar
        assertNull(HostName.canonicalHost(null));
        assertNull(HostName.canonicalHost("api.example.0x1"));
    }

    @Test
    void thePlatformsNameIsComparedWithTheOneFormNeverUsedAsIt() {
        assertEquals("api.example.com", PinningTrustManager.platformName("\uFF41\uFF50\uFF49.example.com"));
        // Its one form is an A-label of its own: another name, so such a connection is refused.
        assertEquals("xn--mi7cqau.example.com", HostName.canonicalHost("\uFF41\uFF50\uFF49.example.com"));
        assertEquals("xn--bcher-kva.example", PinningTrustManager.platformName("b\u00fccher.example"));
        assertEquals("xn--bcher-kva.example", HostName.canonicalHost("b\u00fccher.example"));
        // ASCII is matched as it is (IP literals by address).
        for (String host : List.of("API.Example.com", "localhost", "127.0.0.1", "::1", "[::1]", "0:0:0:0:0:0:0:1")) {
            assertEquals(host, PinningTrustManager.platformName(host));
        }
        assertNull(PinningTrustManager.platformName("a_b.\u4f8b"));
        // JSSE matches an IPv4-mapped literal as the IPv4 address.
        assertEquals("127.0.0.1", PinningTrustManager.platformName("::FFFF:7f00:1"));
        assertEquals("::ffff:127.0.0.1", HostName.canonicalHost("::FFFF:7f00:1"));
    }
}
