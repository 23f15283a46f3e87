import PinKeeper
import Testing

/// `HostName.canonical` beyond the table's rows: Punycode against encodings Python's codec
/// gives (RFC 3492's own samples among them), and forms the table does not spell out.
@Suite("HostName: the one spelling of a host")
struct HostNameTests {
    @Test(
        "a label with non-ASCII scalars becomes its RFC 3492 A-label, as written",
        arguments: [
            ("他们为什么不说中文", "ihqwcrb4cv8a8dqg056pqjye"),  // RFC 3492 7.1 (B)
            ("ليهمابتكلموشعربي؟", "egbpdaj6bu4bxfgehfvwxn"),  // RFC 3492 7.1 (A)
            ("münchen-ost", "mnchen-ost-9db"), ("☃-⌘", "--dqo34k"), ("ÿÿÿÿ", "wdaaaa"),
            ("a\u{E9}\u{301}b", "ab-bja85s"), ("😀😀x", "x-iv3sa"),
        ])
    func punycode(label: String, encoded: String) {
        #expect(HostName.canonical("\(label).example") == "xn--\(encoded).example")
    }

    @Test(
        "IPv6: RFC 5952 text, dotted only for IPv4-mapped addresses",
        arguments: [
            ("::", "::"), ("::ffff:0:0", "::ffff:0.0.0.0"), ("::1.2.3.4", "::102:304"), ("1:2:3:4:5:6:7::", "1:2:3:4:5:6:7:0"),
            ("::2:3:4:5:6:7:8", "0:2:3:4:5:6:7:8"), ("1:0:0:2:0:0:0:3", "1:0:0:2::3"), ("FE80::ABCD", "fe80::abcd"),
        ])
    func ipv6(spelling: String, host: String) {
        #expect(HostName.canonical(spelling) == host)
    }

    @Test(
        "spellings without one form are refused",
        arguments: [
            "", "[]", "[", ":::", "1:::2", ":1::", "1:2:3:4:5:6:7:8:9", "1:2:3:4:5:6:7:8::", "::1.2.3", "::1.2.3.4:5",
            "1.2.3.4::", "::g", "0.0.0.0.", "1.2.3", "256.1.1.1", "1.2.3.4.5", "a.0x1", "example.42", "a..b", "..",
            "a\u{FF61}b",
        ])
    func refused(spelling: String) {
        #expect(HostName.canonical(spelling) == nil)
    }

    @Test("DNS names keep what is not an ASCII capital, a trailing dot or a non-ASCII label")
    func dnsNames() {
        #expect(HostName.canonical("0.example") == "0.example")
        #expect(HostName.canonical("example.x0") == "example.x0")
        #expect(HostName.canonical("_srv.Example") == "_srv.example")
        #expect(HostName.canonical("localhost.") == "localhost")
        #expect(HostName.canonical("0") == nil)  // all digits: an IPv4 literal, and not four parts
    }
}
