import PinKeeper
import TestSupport
import Testing
@testable import PinKeeperDaemon

/// A static list's ETag and Last-Modified go back to the server in the next request: only valid
/// header values may, so that neither a hostile server nor an edited state file can add headers.
@Suite("ETag and Last-Modified are sent back only when valid")
struct ValidatorFieldsTests {
    @Test(arguments: [
        "\"abc\"", "W/\"abc\"", "\"\"", "W/\"\"", "\"a!#$%&'()*+,-./09:;<=>?@AZ[\\]^_`az{|}~\"",
        "\"caf\u{E9}\"", "\"a\u{301}\"", "\"5f2b-61a8e\"",
    ])
    func validETags(_ value: String) {
        #expect(ValidatorFields.isValidETag(value))
    }

    @Test(arguments: [
        "", "\"", "W/\"", "abc", "\"abc", "abc\"", "w/\"abc\"", "W/abc", "W/ \"abc\"", " \"abc\"",
        "\"a\"b\"", "\"a b\"", "\"a\tb\"", "\"a\u{7F}\"", "\"a\0\"", "\"a\rb\"", "\"a\nb\"",
        "\"v1\"\r\nX-Injected: yes", "\"v1\"\rX-Injected: yes", "\"v1\r\nX-Injected: yes\"",
        "\"v1\"\u{301}", "\"v1\" \"v2\"",
    ])
    func invalidETags(_ value: String) {
        #expect(!ValidatorFields.isValidETag(value))
    }

    @Test(arguments: ["Sun, 06 Nov 1994 08:49:37 GMT", "Wed, 21 Oct 2015 07:28:00 GMT", "Thu, 01 Jan 1970 00:00:00 GMT"])
    func validLastModified(_ value: String) {
        #expect(ValidatorFields.isValidLastModified(value))
    }

    @Test(arguments: [
        "", "Sunday, 06-Nov-94 08:49:37 GMT", "Sun Nov  6 08:49:37 1994", "1994-11-06T08:49:37Z",
        "Sun, 06 Nov 1994 08:49:37 GMT\r\nX-Injected: yes", "Sun, 06 Nov 1994 08:49:37 GMT\rX",
        "Sun, 06 Nov 1994 08:49:37\u{1}GMT", "Sun,  6 Nov 1994 08:49:37 GMT", "Sun, +6 Nov 1994 08:49:37 GMT",
        "Sun, 06 Nov 1994 -1:49:37 GMT", " Sun, 06 Nov 1994 08:49:37 GMT", "Sun, 06 Nov 1994 08:49:37 UTC",
        "Sun, 06 Nov 1994 08:49:37 GMT\u{301}", "Sun, 32 Nov 1994 08:49:37 GMT",
    ])
    func invalidLastModified(_ value: String) {
        #expect(!ValidatorFields.isValidLastModified(value))
    }

    static func staticStore() throws -> StoreConfig {
        StoreConfig(id: "s", url: "https://127.0.0.1:1/s", publicKeys: [try Vectors.keyA()], mode: .static)
    }

    static let cached = CacheFile(
        list: PinList(pins: []),
        metadata: .init(
            store: "s", source: "https://127.0.0.1:1/s",
            updated: 0, nextUpdate: 0, mode: .static))

    /// What an older pinkeeper (or a hand edit) may have left in the state file is not sent.
    @Test func invalidRememberedValidatorsAreNotSent() throws {
        var memory = StoreState()
        memory.etag = "\"v1\"\r\nX-Injected: yes"
        memory.lastModified = "Sun, 06 Nov 1994 08:49:37 GMT\r\nX-Injected: yes"
        let exchange = try ListExchange(store: Self.staticStore(), previous: Self.cached, memory: memory)
        #expect(exchange.request.headers.isEmpty, "\(exchange.request.headers)")
        #expect(!exchange.isConditional)
    }

    @Test func validRememberedValidatorsAreSent() throws {
        var memory = StoreState()
        memory.etag = "W/\"v1\""
        memory.lastModified = "Sun, 06 Nov 1994 08:49:37 GMT"
        memory.listDigest = String(repeating: "0", count: 64)
        let exchange = try ListExchange(store: Self.staticStore(), previous: Self.cached, memory: memory)
        #expect(exchange.request.headers == ["If-None-Match: W/\"v1\"", "If-Modified-Since: Sun, 06 Nov 1994 08:49:37 GMT"])
        #expect(exchange.isConditional)
    }

    /// After the store's `url` changed, the old server's validators are not sent to the new one:
    /// its 304 (a date is enough) would keep the old list under the new source.
    @Test func noValidatorsForAnotherURL() throws {
        var memory = StoreState()
        memory.etag = "W/\"v1\""
        memory.lastModified = "Sun, 06 Nov 1994 08:49:37 GMT"
        memory.listDigest = String(repeating: "0", count: 64)
        var moved = try Self.staticStore()
        moved.url = "https://127.0.0.1:2/elsewhere"
        let exchange = try ListExchange(store: moved, previous: Self.cached, memory: memory)
        #expect(exchange.request.headers.isEmpty, "\(exchange.request.headers)")
        #expect(!exchange.isConditional)
    }

    /// Without a digest of the list a 304 stands for (an older version's state file), the request
    /// is unconditional, so that the next response is verified and its digest recorded.
    @Test func noValidatorsWithoutAListDigest() throws {
        var memory = StoreState()
        memory.etag = "W/\"v1\""
        let exchange = try ListExchange(store: Self.staticStore(), previous: Self.cached, memory: memory)
        #expect(exchange.request.headers.isEmpty)
        #expect(!exchange.isConditional)
    }
}
