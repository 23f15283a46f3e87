import CCurl
import Foundation
import Glibc
import TestSupport
import Testing
@testable import PinKeeperDaemon

/// libcurl and its ~30 libraries leave the daemon's memory when a pass ends, and come back for the
/// next one: an idle `pinkeeper run` does not keep them mapped.
@Suite("libcurl unloaded between the daemon's passes")
struct CurlUnloadTests {
    /// Whether a process maps libcurl.so (its code, data or anything of the file); nil if its
    /// maps could not be read in full. (String(contentsOfFile:) reads one page of a /proc file.)
    static func mapsCurl(_ pid: pid_t) -> Bool? {
        guard let file = FileHandle(forReadingAtPath: "/proc/\(pid)/maps"), let data = try? file.readToEnd() else { return nil }
        let maps = String(decoding: data, as: UTF8.self)
        guard maps.contains("[vdso]") else { return nil }  // one of the last lines: the whole file was read
        return maps.contains("/libcurl.so")
    }

    @Test("READY after the first pass finds libcurl unmapped; SIGUSR1's pass loads it, fetches and unmaps it again",
          .timeLimit(.minutes(2)))
    func unloadedAfterEachPass() throws {
        let server = try FixtureServer(), sandbox = try Sandbox()
        try server.route("a", Lists.route(entries: [Lists.entry("a.example.com", 1)]))
        let config = try sandbox.writeConfig([("a", server.url("a"), "challenge")])
        let socket = try NotifySocket(abstract: false)
        let daemon = try DaemonProcess(config: config, environment: ["NOTIFY_SOCKET": socket.address])

        let ready = socket.collect(until: { $0.contains("READY=1") }, timeout: 15)
        try #require(ready.last?.contains("READY=1") == true, "got \(ready)")
        #expect(server.requests("a").count == 1)
        #expect(try sandbox.published("a").list.pins.map(\.name) == ["a.example.com"])
        #expect(Self.mapsCurl(daemon.pid) == false, "libcurl still mapped after the first pass")

        // The second pass needs libcurl again: it must load, fetch the new list and publish it.
        try server.route("a", Lists.route(entries: [Lists.entry("a.example.com", 1), Lists.entry("b.example.com", 2)]))
        daemon.signal(SIGUSR1)
        let status = socket.collect(until: { $0.hasPrefix("STATUS=") }, timeout: 15)
        #expect(status.last?.hasPrefix("STATUS=1 store: 1 fresh") == true, "got \(status)")
        #expect(server.requests("a").count == 2)
        #expect(try sandbox.published("a").list.pins.map(\.name).sorted() == ["a.example.com", "b.example.com"])
        #expect(sandbox.savedState("a").lastResult == .ok)
        #expect(Self.mapsCurl(daemon.pid) == false, "libcurl still mapped after the second pass")

        daemon.signal(SIGTERM)
        #expect(daemon.waitForExit(timeout: 5) == 0)
        #expect(!daemon.stderr.contains("called while libcurl is not loaded"), "\(daemon.stderr)")
    }

    @Test("a pass whose server is down unloads libcurl too", .timeLimit(.minutes(2)))
    func unloadedAfterFailedPass() throws {
        let server = try FixtureServer(), sandbox = try Sandbox()
        let url = server.url("a")
        server.stop()  // nothing listens on its port any more
        let config = try sandbox.writeConfig([("a", url, "challenge")])
        let socket = try NotifySocket(abstract: false)
        let daemon = try DaemonProcess(config: config, environment: ["NOTIFY_SOCKET": socket.address])

        let ready = socket.collect(until: { $0.contains("READY=1") }, timeout: 15)
        try #require(ready.last?.contains("READY=1") == true, "got \(ready)")
        #expect(sandbox.savedState("a").lastResult == .networkError)
        #expect(Self.mapsCurl(daemon.pid) == false, "libcurl still mapped after a failed pass")

        daemon.signal(SIGTERM)
        #expect(daemon.waitForExit(timeout: 5) == 0)
    }

    /// In a child process of its own (an exit test): other tests of this process fetch at the same
    /// time, and libcurl is one per process.
    @Test("the loader: load, unload, load again; unload refused while a handle or a user exists")
    func loaderCycle() async {
        await #expect(processExitsWith: .success) {
            let pid = getpid()
            precondition(pk_curl_load() == nil, "libcurl did not load")
            precondition(CurlUnloadTests.mapsCurl(pid) == true)
            for kind in ["easy", "multi", "share"] {
                let refused: Bool
                switch kind {
                case "easy":
                    let easy = pk_curl_easy_init()!
                    refused = pk_curl_unload() != nil
                    pk_curl_easy_cleanup(easy)
                case "multi":
                    let multi = pk_curl_multi_init()!
                    refused = pk_curl_unload() != nil
                    _ = pk_curl_multi_cleanup(multi)
                default:
                    let share = pk_curl_share_init()!
                    refused = pk_curl_unload() != nil
                    _ = pk_curl_share_cleanup(share)
                }
                precondition(refused, "unload was not refused with a \(kind) handle open")
                precondition(CurlUnloadTests.mapsCurl(pid) == true, "libcurl unmapped with a \(kind) handle open")
            }
            precondition(pk_curl_open_handles() == 0)

            // A fetch in progress (a user) keeps it too, whatever the handle count says.
            precondition(CurlLibrary.use() == nil)
            precondition(CurlLibrary.unloadIfUnused() != nil, "unloaded while in use")
            CurlLibrary.done()
            precondition(CurlLibrary.unloadIfUnused() == nil, "not unloaded once unused")
            precondition(CurlUnloadTests.mapsCurl(pid) == false, "libcurl still mapped after unload")
            precondition(pk_curl_unload() == nil, "a second unload is not a no-op")

            precondition(pk_curl_load() == nil, "libcurl did not load again")
            precondition(CurlUnloadTests.mapsCurl(pid) == true)
            let easy = pk_curl_easy_init()!
            precondition(pk_curl_set_string(easy, CURLOPT_URL, "https://127.0.0.1/") == CURLE_OK)
            pk_curl_easy_cleanup(easy)
            precondition(pk_curl_unload() == nil)
        }
    }

    @Test("after an unload, a libcurl call aborts naming itself instead of jumping into unmapped code")
    func callAfterUnloadAborts() async {
        let child = await #expect(processExitsWith: .signal(SIGABRT), observing: [\.standardErrorContent]) {
            precondition(pk_curl_load() == nil && pk_curl_unload() == nil)
            _ = pk_curl_easy_init()
        }
        let stderr = String(decoding: child?.standardErrorContent ?? [], as: UTF8.self)
        #expect(stderr.contains("curl_easy_init called while libcurl is not loaded"), "\(stderr)")
    }


    /// The whole Fetch side, as the daemon uses it: two fetches on real connections, each followed
    /// by `passEnded`, which ends the driver thread and unloads libcurl.
    @Test("CurlFetcher: fetch, passEnded unloads, fetch again, passEnded unloads again")
    func fetcherCycle() async {
        await #expect(processExitsWith: .success) {
            let server = try! FixtureServer()
            try! server.route("a", Lists.route(mode: "static", entries: [Lists.entry("a.example.com", 1)]))
            let fetcher = CurlFetcher(userAgent: "pinkeeper-test", linger: .seconds(60))
            let request = HTTPRequest(url: server.url("a"), caFile: TestEnvironment.certificate("ca.pem"),
                                      timeout: 10)
            for round in 1...2 {
                let response = try! await fetcher.fetch(request)
                precondition(response.status == 200, "round \(round): HTTP \(response.status)")
                precondition(CurlUnloadTests.mapsCurl(getpid()) == true, "round \(round): libcurl not loaded by the fetch")
                await fetcher.passEnded()  // long before the 60 s linger
                precondition(CurlUnloadTests.mapsCurl(getpid()) == false, "round \(round): libcurl still mapped after passEnded")
                precondition(pk_curl_open_handles() == 0)
            }
        }
    }

    @Test("preload maps libcurl on a thread of its own, and awaitPreload returns once it has")
    func preloadThenAwait() async {
        await #expect(processExitsWith: .success) {
            precondition(CurlUnloadTests.mapsCurl(getpid()) == false, "libcurl mapped before the preload")
            CurlLibrary.preload()
            await CurlLibrary.awaitPreload()
            precondition(CurlUnloadTests.mapsCurl(getpid()) == true, "awaitPreload returned before libcurl was loaded")
            await CurlLibrary.awaitPreload()  // none running: returns at once
            precondition(CurlLibrary.unloadIfUnused() == nil, "the preload kept a use")
        }
    }
}
