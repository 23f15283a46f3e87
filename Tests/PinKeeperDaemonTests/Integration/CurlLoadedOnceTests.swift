import CCurl
import Foundation
import Glibc
import Testing
@testable import PinKeeperDaemon
import PinKeeper

/// libcurl and its ~30 libraries are loaded by the daemon's first fetch and stay for the life of
/// the process: later passes, and the driver threads that come and go, neither unload nor load
/// them again, so curl_global_init runs once.
@Suite("libcurl loaded once per process")
struct CurlLoadedOnceTests {
    /// Whether a process maps libcurl.so (its code, data or anything of the file); nil if its
    /// maps could not be read in full. (String(contentsOfFile:) reads one page of a /proc file.)
    static func mapsCurl(_ pid: pid_t) -> Bool? {
        guard let file = FileHandle(forReadingAtPath: "/proc/\(pid)/maps"), let data = try? file.readToEnd() else { return nil }
        let maps = String(decoding: data, as: UTF8.self)
        guard maps.contains("[vdso]") else { return nil }  // one of the last lines: the whole file was read
        return maps.contains("/libcurl.so")
    }

    /// How many threads of `pid` carry `name` (/proc/PID/task/*/comm).
    static func threads(named name: String, in pid: pid_t) -> Int {
        let tasks = "/proc/\(pid)/task"
        return ((try? FileManager.default.contentsOfDirectory(atPath: tasks)) ?? []).filter { thread in
            let comm = (try? String(contentsOfFile: "\(tasks)/\(thread)/comm", encoding: .utf8)) ?? ""
            return comm.trimmingCharacters(in: .whitespacesAndNewlines) == name
        }.count
    }

    /// Three passes of a real daemon under the dynamic loader's log (`LD_DEBUG=files,bindings`):
    /// libcurl is opened once and never closed, and `curl_global_init` is looked up (and so run,
    /// see CurlLoader.c) once, although the driver thread ended between the second and third pass.
    @Test(
        "the daemon loads libcurl once: mapped after every pass and after its idle driver thread ended",
        .timeLimit(.minutes(2)))
    func loadedOnceAcrossPasses() async throws {
        let server = try FixtureServer(), sandbox = try Sandbox()
        try server.route("a", Lists.route(entries: [Lists.entry("a.example.com", 1)]))
        let config = try sandbox.writeConfig([("a", server.url("a"), "challenge")])
        let socket = try NotifySocket(abstract: false)
        let log = sandbox.root.appendingPathComponent("ld-debug").path
        let daemon = try DaemonProcess(
            config: config,
            environment: [
                "NOTIFY_SOCKET": socket.address,
                "LD_DEBUG": "files,bindings", "LD_DEBUG_OUTPUT": log,
            ])

        let ready = socket.collect(until: { $0.contains("READY=1") }, timeout: 15)
        try #require(ready.last?.contains("READY=1") == true, "got \(ready)")
        #expect(server.requests("a").count == 1)
        #expect(Self.mapsCurl(daemon.pid) == true, "libcurl not mapped after the first pass")

        // The second pass, on the loaded library and the driver thread still lingering.
        try server.route("a", Lists.route(entries: [Lists.entry("a.example.com", 1), Lists.entry("b.example.com", 2)]))
        daemon.signal(SIGUSR1)
        let second = socket.collect(until: { $0.hasPrefix("STATUS=") }, timeout: 15)
        #expect(second.last?.hasPrefix("STATUS=1 store: 1 fresh") == true, "got \(second)")
        #expect(server.requests("a").count == 2)
        #expect(try sandbox.published("a").list.pins.map(\.name).sorted() == ["a.example.com", "b.example.com"])
        #expect(Self.mapsCurl(daemon.pid) == true, "libcurl not mapped after the second pass")

        // 10 s without a transfer end the driver's thread and connections, not libcurl.
        let deadline = Date().addingTimeInterval(30)
        while Self.threads(named: "pinkeeper-curl", in: daemon.pid) > 0 && Date() < deadline {
            try await Task.sleep(for: .milliseconds(200))
        }
        #expect(Self.threads(named: "pinkeeper-curl", in: daemon.pid) == 0, "the idle driver thread did not end")
        #expect(Self.mapsCurl(daemon.pid) == true, "libcurl unmapped when the driver thread ended")

        // The third pass starts a new driver thread on the same library.
        try server.route("a", Lists.route(entries: [Lists.entry("c.example.com", 3)]))
        daemon.signal(SIGUSR1)
        let third = socket.collect(until: { $0.hasPrefix("STATUS=") }, timeout: 15)
        #expect(third.last?.hasPrefix("STATUS=1 store: 1 fresh") == true, "got \(third)")
        #expect(server.requests("a").count == 3)
        #expect(try sandbox.published("a").list.pins.map(\.name).contains("c.example.com"))

        daemon.signal(SIGTERM)
        #expect(daemon.waitForExit(timeout: 5) == 0)
        #expect(!daemon.stderr.contains("before libcurl was loaded"), "\(daemon.stderr)")

        // The loader writes LOG.PID.
        let prefix = URL(fileURLWithPath: log).lastPathComponent + ".\(daemon.pid)"
        let text = try String(contentsOfFile: sandbox.root.appendingPathComponent(prefix).path, encoding: .utf8)
        let lines = text.split(separator: "\n")
        let opened = lines.filter { $0.contains("file=libcurl.so.4 [0];  dynamically loaded by") }
        let closed = lines.filter { $0.contains("libcurl.so.4 [0];  destroying link map") }
        let initLookups = lines.filter { $0.contains("normal symbol `curl_global_init'") }
        #expect(opened.count == 1, "libcurl opened \(opened.count) times")
        #expect(closed.isEmpty, "libcurl closed: \(closed)")
        #expect(initLookups.count == 1, "curl_global_init resolved \(initLookups.count) times")
    }

    @Test("a libcurl call before the load aborts naming itself instead of jumping to address 0")
    func callBeforeLoadAborts() async {
        let child = await #expect(processExitsWith: .signal(SIGABRT), observing: [\.standardErrorContent]) {
            _ = pk_curl_easy_init()
        }
        let stderr = String(decoding: child?.standardErrorContent ?? [], as: UTF8.self)
        #expect(stderr.contains("curl_easy_init called before libcurl was loaded"), "\(stderr)")
    }

    /// In a child process of its own (an exit test): other tests of this process load libcurl.
    @Test("preload maps libcurl on a thread of its own, and awaitPreload returns once it has")
    func preloadThenAwait() async {
        await #expect(processExitsWith: .success) {
            precondition(CurlLoadedOnceTests.mapsCurl(getpid()) == false, "libcurl mapped before the preload")
            CurlLibrary.preload()
            await CurlLibrary.awaitPreload()
            precondition(CurlLoadedOnceTests.mapsCurl(getpid()) == true, "awaitPreload returned before libcurl was loaded")
            await CurlLibrary.awaitPreload()  // none running: returns at once
            precondition(CurlLibrary.load() == nil, "a second load failed")
        }
    }
}
