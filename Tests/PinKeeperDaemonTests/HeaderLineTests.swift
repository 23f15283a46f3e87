import Testing
@testable import PinKeeperDaemon

/// Response header lines are split where libcurl splits them: at the first colon byte.
@Suite("Response header lines")
struct HeaderLineTests {
    private func field(_ line: String) -> [String]? { HTTPResponse.field(inHeaderLine: line).map { [$0.name, $0.value] } }

    @Test func nameAndValue() {
        #expect(field("ETag: \"v1\"\r\n") == ["etag", "\"v1\""])
        #expect(field("X-Cert-Pinning-Signature:MEUC:x\r\n") == ["x-cert-pinning-signature", "MEUC:x"])
        #expect(field("HTTP/1.1 200 OK\r\n") == nil)
    }

    /// `:` followed by a combining mark is one Character: a search by Character went on to a
    /// later colon (making the rest of the line part of the name), or found none.
    @Test func aCombiningMarkAfterTheColonDoesNotMoveIt() {
        #expect(field("ETag:\u{301}\"v1\": x\r\n") == ["etag", "\u{301}\"v1\": x"])
        #expect(field("X-A:\u{301}\r\n") == ["x-a", "\u{301}"])
    }
}
