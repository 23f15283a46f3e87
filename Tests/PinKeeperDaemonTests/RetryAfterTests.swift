import Foundation
@testable import PinKeeperDaemon
import Testing

@Suite("Retry-After")
struct RetryAfterTests {
    private func response(_ value: String) -> HTTPResponse {
        HTTPResponse(status: 429, headers: ["retry-after": value], body: Data())
    }

    @Test("delta-seconds and IMF-fixdate forms")
    func forms() {
        #expect(response("120").retryAfter(now: 1_000) == 120)
        #expect(response(" 7 ").retryAfter(now: 1_000) == 7)
        // 1994-11-06 08:49:37 UTC is 784111777.
        #expect(response("Sun, 06 Nov 1994 08:49:37 GMT").retryAfter(now: 784_111_700) == 77)
        #expect(response("Sun, 06 Nov 1994 08:49:37 GMT").retryAfter(now: 784_111_800) == 0, "a past date means now")
        #expect(HTTPDate.parse("Tue, 29 Feb 2028 23:59:59 GMT") == 1_835_481_599)
    }

    @Test(
        "anything else is no Retry-After at all",
        arguments: [
            "", "soon", "-5x", "Sun, 06 Nov 1994 08:49:37 UTC", "Sunday, 06-Nov-94 08:49:37 GMT",
            "Sun, 06 Nov 1994 25:49:37 GMT", "Sun, 06 Foo 1994 08:49:37 GMT", "Sün, 06 Nov 1994 08:49:37 GMT", "١٢٠",
        ])
    func rejected(_ value: String) {
        #expect(response(value).retryAfter(now: 0) == nil)
    }

    @Test("only 429 and 503 carry Retry-After into the failure; 2xx is no failure")
    func statusFailure() {
        func failure(_ status: Int, _ headers: [String: String] = ["retry-after": "3600"]) -> UpdateFailure? {
            UpdateFailure(status: HTTPResponse(status: status, headers: headers, body: Data()), now: 1_000)
        }
        #expect(failure(200) == nil)
        #expect(failure(204) == nil)
        #expect(failure(503)?.retryAfter == 3_600)
        #expect(failure(429)?.retryAfter == 3_600)
        #expect(failure(503)?.result == .httpError)
        #expect(failure(503)?.reason == "the server answered HTTP 503 (Retry-After 3600s)")
        #expect(failure(503, [:])?.retryAfter == nil)
        #expect(failure(500)?.retryAfter == nil, "a 500's Retry-After is no request to wait")
        #expect(failure(500)?.reason == "the server answered HTTP 500")
        #expect(failure(301)?.retryAfter == nil)
    }
}
