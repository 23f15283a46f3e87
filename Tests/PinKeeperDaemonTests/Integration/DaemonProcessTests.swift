import Foundation
import Glibc
import Testing
import PinKeeperDaemon

/// `pinkeeper run` under a real notify socket: READY, STATUS, WATCHDOG, reload, SIGUSR1, stop.
@Suite("The daemon under a notify socket", .serialized)
struct DaemonProcessTests {
    let server: FixtureServer
    let sandbox: Sandbox

    init() throws {
        server = try FixtureServer()
        sandbox = try Sandbox()
        try server.route("a", Lists.route(entries: [Lists.entry("api.example.com", 1)]))
    }

    private func start(abstract: Bool = false, environment: [String: String] = [:]) throws -> (DaemonProcess, NotifySocket, String) {
        let config = try sandbox.writeConfig([("a", server.url("a"), "challenge")])
        let socket = try NotifySocket(abstract: abstract)
        let daemon = try DaemonProcess(config: config, environment: ["NOTIFY_SOCKET": socket.address].merging(environment) { $1 })
        return (daemon, socket, config)
    }

    @Test("READY comes only after the empty store's first attempt, with a STATUS line", arguments: [false, true])
    func readyAfterFirstAttempt(abstract: Bool) throws {
        let (daemon, socket, _) = try start(abstract: abstract)
        let messages = socket.collect(until: { $0.contains("READY=1") }, timeout: 15)
        #expect(messages.last?.contains("READY=1") == true, "got \(messages)")
        // The attempt finished (and published) before READY was sent.
        #expect(FileManager.default.fileExists(atPath: sandbox.cacheFile("a").path))
        let status = messages.first { $0.hasPrefix("STATUS=") }
        // A first fetch is a catch-up: the next one lands anywhere in the next 7 days.
        #expect(status?.hasPrefix("STATUS=1 store: 1 fresh; next update in ") == true, "status: \(status ?? "none")")
        daemon.signal(SIGTERM)
        #expect(daemon.waitForExit(timeout: 5) == 0)
    }

    @Test("WATCHDOG=1 every half period, from the loop itself")
    func watchdogCadence() throws {
        let (daemon, socket, _) = try start(environment: ["WATCHDOG_USEC": "2000000"])
        _ = socket.collect(until: { $0.contains("READY=1") }, timeout: 15)
        let start = Date()
        var pings: [TimeInterval] = []
        while Date().timeIntervalSince(start) < 3.6, let message = socket.receive(timeout: 2) {
            if message == "WATCHDOG=1" { pings.append(Date().timeIntervalSince(start)) }
        }
        #expect(pings.count >= 3, "pings at \(pings)")
        let gaps = zip(pings.dropFirst(), pings).map { $0 - $1 }
        #expect(gaps.allSatisfy { $0 > 0.7 && $0 < 1.4 }, "gaps \(gaps)")
        daemon.signal(SIGTERM)
        #expect(daemon.waitForExit(timeout: 5) == 0)
    }

    @Test("a download hanging until its timeout does not starve the watchdog")
    func watchdogDuringHang() throws {
        try server.route(
            "a",
            Lists.route(
                entries: [Lists.entry("api.example.com", 1)],
                extra: ["behavior": "hang_after_headers", "hang_seconds": 30]))
        let (daemon, socket, _) = try start(environment: ["WATCHDOG_USEC": "1000000"])
        let messages = socket.collect(until: { _ in false }, timeout: 3)
        #expect(messages.filter { $0 == "WATCHDOG=1" }.count >= 4, "got \(messages)")
        #expect(!messages.contains("READY=1"), "READY must wait for the hanging first attempt")
        daemon.signal(SIGTERM)
        #expect(daemon.waitForExit(timeout: 5) == 0)
        // Shutdown interrupted the download: that is not a server failure, so no back-off is recorded.
        #expect(sandbox.savedState("a").consecutiveFailures == 0)
    }

    @Test("WATCHDOG_PID of another process disables the pings")
    func watchdogForSomeoneElse() throws {
        let (daemon, socket, _) = try start(environment: ["WATCHDOG_USEC": "500000", "WATCHDOG_PID": "1"])
        let messages = socket.collect(until: { _ in false }, timeout: 1.5)
        #expect(!messages.contains("WATCHDOG=1"))
        daemon.signal(SIGTERM)
        #expect(daemon.waitForExit(timeout: 5) == 0)
    }

    @Test("SIGHUP: RELOADING=1 with MONOTONIC_USEC, then READY=1; an added store is fetched at once")
    func reload() throws {
        let (daemon, socket, _) = try start()
        _ = socket.collect(until: { $0.contains("READY=1") }, timeout: 15)
        try server.route("b", Lists.route(entries: [Lists.entry("b.example.com", 2)]))
        try sandbox.writeConfig([("a", server.url("a"), "challenge"), ("b", server.url("b"), "challenge")])
        daemon.signal(SIGHUP)
        let messages = socket.collect(until: { $0 == "READY=1" }, timeout: 10)
        let reloading = try #require(messages.first { $0.hasPrefix("RELOADING=1") })
        let monotonic = reloading.split(separator: "\n").first { $0.hasPrefix("MONOTONIC_USEC=") }
        #expect(UInt64(monotonic?.dropFirst("MONOTONIC_USEC=".count) ?? "") ?? 0 > 0)
        #expect(messages.last == "READY=1")
        let fetched = socket.collect(until: { $0.hasPrefix("STATUS=2 stores: 2 fresh") }, timeout: 10)
        #expect(fetched.last?.hasPrefix("STATUS=2 stores: 2 fresh") == true, "got \(fetched)")
        #expect(server.requests("b").count == 1)
        daemon.signal(SIGTERM)
        #expect(daemon.waitForExit(timeout: 5) == 0)
    }

    @Test("a bad configuration on reload is logged and the daemon keeps running on the old one")
    func badReload() throws {
        let (daemon, socket, config) = try start()
        _ = socket.collect(until: { $0.contains("READY=1") }, timeout: 15)
        try "[stores.a]\nurl = \"http://insecure.example\"\n".write(toFile: config, atomically: true, encoding: .utf8)
        daemon.signal(SIGHUP)
        let messages = socket.collect(until: { $0 == "READY=1" }, timeout: 10)
        #expect(messages.last == "READY=1")
        #expect(daemon.isRunning)
        daemon.signal(SIGUSR1)  // still updating store "a" with the old configuration
        _ = socket.collect(until: { $0.hasPrefix("STATUS=") }, timeout: 10)
        #expect(server.requests("a").count == 2)
        daemon.signal(SIGTERM)
        #expect(daemon.waitForExit(timeout: 5) == 0)
        let errors = daemon.stderr.split(separator: "\n").filter { $0.isLog("error", "reload failed") }
        #expect(errors.count == 1)
        #expect(errors.first?.contains("key 'url'") == true, "\(errors)")
    }

    @Test("SIGUSR1 updates every store now")
    func updateNow() throws {
        let (daemon, socket, _) = try start()
        _ = socket.collect(until: { $0.contains("READY=1") }, timeout: 15)
        #expect(server.requests("a").count == 1)
        daemon.signal(SIGUSR1)
        _ = socket.collect(until: { $0.hasPrefix("STATUS=") }, timeout: 10)
        #expect(server.requests("a").count == 2)
        daemon.signal(SIGTERM)
        #expect(daemon.waitForExit(timeout: 5) == 0)
    }

    @Test("SIGTERM during a hanging download: STOPPING=1 and exit 0 in under 2 s")
    func stopDuringDownload() throws {
        try server.route(
            "a",
            Lists.route(
                entries: [Lists.entry("api.example.com", 1)],
                extra: ["behavior": "hang_after_headers", "hang_seconds": 30]))
        let (daemon, socket, _) = try start()
        let deadline = Date().addingTimeInterval(10)
        while server.requests("a").isEmpty && Date() < deadline { usleep(20_000) }
        #expect(!server.requests("a").isEmpty, "the download never started")
        usleep(200_000)
        let sent = Date()
        daemon.signal(SIGTERM)
        let status = daemon.waitForExit(timeout: 5)
        let elapsed = Date().timeIntervalSince(sent)
        #expect(status == 0)
        #expect(elapsed < 2, "took \(elapsed)s")
        let messages = socket.collect(until: { $0 == "STOPPING=1" }, timeout: 1)
        #expect(messages.contains("STOPPING=1"))
        #expect(!messages.contains("READY=1"))
        #expect(!FileManager.default.fileExists(atPath: sandbox.cacheFile("a").path))
    }

    // Signals arrive through a handler and a pipe, not libdispatch: as processes see them.
    @Test("SIGINT stops it like SIGTERM: STOPPING=1 and exit 0")
    func interrupt() throws {
        let config = try sandbox.writeConfig([("a", server.url("a"), "challenge")])
        let socket = try NotifySocket(abstract: false)
        let daemon = try DaemonProcess(config: config, environment: ["NOTIFY_SOCKET": socket.address])
        let ready = socket.collect(until: { $0.contains("READY=1") }, timeout: 15)
        try #require(ready.last?.contains("READY=1") == true, "got \(ready)")
        daemon.signal(SIGINT)
        let stopping = socket.collect(until: { $0.contains("STOPPING=1") }, timeout: 5)
        #expect(stopping.last?.contains("STOPPING=1") == true, "got \(stopping)")
        #expect(daemon.waitForExit(timeout: 5) == 0)
    }

    @Test("a hook started by the daemon has no signal ignored or blocked")
    func hookStartsClean() throws {
        let record = sandbox.root.appendingPathComponent("hook-signals").path
        // The shell reads its own status with builtins: while it waits for a child it blocks signals.
        let hook = try HookScript(
            in: sandbox.root,
            body: """
                while IFS= read -r line; do case $line in Sig*) echo "$line";; esac; done < /proc/$$/status > '\(record).tmp'
                mv '\(record).tmp' '\(record)'
                """)
        let config = try sandbox.writeConfig([("a", server.url("a"), "challenge")], storeExtra: hook.keys())
        let daemon = try DaemonProcess(config: config)
        let deadline = Date().addingTimeInterval(15)
        while !FileManager.default.fileExists(atPath: record) && Date() < deadline { usleep(20_000) }
        daemon.signal(SIGTERM)
        #expect(daemon.waitForExit(timeout: 5) == 0)
        let lines = try String(contentsOfFile: record, encoding: .utf8).split(separator: "\n")
        func mask(_ name: String) -> UInt64? {
            lines.first { $0.hasPrefix(name + ":") }.flatMap {
                UInt64($0.dropFirst(name.count + 1).trimmingCharacters(in: .whitespaces), radix: 16)
            }
        }
        // Signals 1-31; 32 and 33 are glibc's own, which posix_spawn leaves alone.
        #expect(mask("SigIgn").map { $0 & 0x7fff_ffff } == 0, "\(lines)")
        #expect(mask("SigBlk").map { $0 & 0x7fff_ffff } == 0, "\(lines)")
    }
}
