import Foundation
import Testing
@testable import PinKeeperDaemon
import PinKeeper

/// A static list's ETag and Last-Modified are sent back in the next request. libcurl passes a bare
/// CR in a response header through to its value and sends request headers as given, and the
/// fixture server (Python's header parser) splits lines at a bare CR, as many servers do: an
/// injected header shows up in requests.log as a header of its own.
@Suite("Validators cannot inject request headers")
struct ValidatorInjectionTests {
    @Test("an ETag or Last-Modified with a CR is not kept, and the next request carries neither it nor the injected header")
    func hostileServerValidators() async throws {
        let server = try FixtureServer(), sandbox = try Sandbox()
        try server.route(
            "s",
            Lists.route(
                mode: "static", entries: [Lists.entry("cdn.example.com", 7)],
                extra: [
                    "headers": [
                        "ETag": "\"v1\"\rX-Injected-By-ETag: yes",
                        "Last-Modified": "Sun, 06 Nov 1994 08:49:37 GMT\rX-Injected-By-Date: yes",
                    ]
                ]))
        let store = try sandbox.store("s", url: server.url("s"), mode: .static)
        let updater = sandbox.updater()

        #expect(await updater.update(store).result == .ok)
        #expect(sandbox.savedState("s").etag == nil && sandbox.savedState("s").lastModified == nil)
        #expect(await updater.update(store).result == .ok)

        let second = try #require(server.requests("s").last)
        #expect(second.headers["x-injected-by-etag"] == nil && second.headers["x-injected-by-date"] == nil, "\(second.headers)")
        #expect(second.headers["if-none-match"] == nil && second.headers["if-modified-since"] == nil, "\(second.headers)")
    }

    @Test("a valid ETag beside an invalid Last-Modified is still used")
    func validETagKept() async throws {
        let server = try FixtureServer(), sandbox = try Sandbox()
        try server.route(
            "s",
            Lists.route(
                mode: "static", entries: [Lists.entry("cdn.example.com", 7)],
                extra: [
                    "headers": [
                        "ETag": "W/\"v1\"", "Last-Modified": "Sunday, 06-Nov-94 08:49:37 GMT",
                    ]
                ]))
        let store = try sandbox.store("s", url: server.url("s"), mode: .static)
        let updater = sandbox.updater()

        #expect(await updater.update(store).result == .ok)
        #expect(sandbox.savedState("s").etag == "W/\"v1\"" && sandbox.savedState("s").lastModified == nil)
        #expect(await updater.update(store).result == .ok)
        let second = try #require(server.requests("s").last)
        #expect(second.headers["if-none-match"] == "W/\"v1\"" && second.headers["if-modified-since"] == nil, "\(second.headers)")
    }

    @Test("a state file with CR LF in its validators (older version, hand edit) injects nothing")
    func tamperedStateFile() async throws {
        let server = try FixtureServer(), sandbox = try Sandbox()
        try server.route("s", Lists.route(mode: "static", entries: [Lists.entry("cdn.example.com", 7)]))
        let store = try sandbox.store("s", url: server.url("s"), mode: .static)
        let updater = sandbox.updater()
        #expect(await updater.update(store).result == .ok)  // a published list: the next request may be conditional

        var edited = sandbox.savedState("s")
        edited.etag = "\"v1\"\r\nX-Injected-By-ETag: yes"
        edited.lastModified = "Sun, 06 Nov 1994 08:49:37 GMT\r\nX-Injected-By-Date: yes"
        try StateDirectory(path: sandbox.state.path).save(edited, store: "s")

        #expect(await updater.update(store).result == .ok)
        let second = try #require(server.requests("s").last)
        #expect(second.headers["x-injected-by-etag"] == nil && second.headers["x-injected-by-date"] == nil, "\(second.headers)")
        #expect(second.headers["if-none-match"] == nil && second.headers["if-modified-since"] == nil, "\(second.headers)")
    }
}
