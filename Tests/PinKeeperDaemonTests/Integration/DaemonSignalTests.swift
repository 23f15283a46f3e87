import Foundation
import Glibc
import Testing

/// The daemon's signal handling (a handler and a pipe, not libdispatch) as processes see it.
/// SIGTERM, SIGHUP and SIGUSR1 are covered in `DaemonProcessTests`.
@Suite("Signals of the real daemon", .serialized)
struct DaemonSignalTests {
    let server: FixtureServer
    let sandbox: Sandbox

    init() throws {
        server = try FixtureServer()
        sandbox = try Sandbox()
        try server.route("a", Lists.route(entries: [Lists.entry("api.example.com", 1)]))
    }

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
        let hook = try HookScript(in: sandbox.root, body: """
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
            lines.first { $0.hasPrefix(name + ":") }.flatMap { UInt64($0.dropFirst(name.count + 1).trimmingCharacters(in: .whitespaces), radix: 16) }
        }
        // Signals 1-31; 32 and 33 are glibc's own, which posix_spawn leaves alone.
        #expect(mask("SigIgn").map { $0 & 0x7fff_ffff } == 0, "\(lines)")
        #expect(mask("SigBlk").map { $0 & 0x7fff_ffff } == 0, "\(lines)")
    }
}
