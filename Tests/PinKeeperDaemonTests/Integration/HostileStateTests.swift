import Foundation
import Glibc
@testable import PinKeeperDaemon
import TestSupport
import Testing

/// Times and counts in the state directory come from files that an older version, a hand edit
/// or a damaged disk may have written: none of them may make the daemon trap.
@Suite("State files with extreme numbers")
struct HostileStateTests {
    @Test("retryAt at Int64.min and a failure count at Int.max: the daemon still becomes ready and stops cleanly")
    func extremeStateValues() throws {
        let server = try FixtureServer(), sandbox = try Sandbox()
        try server.route("a", Lists.route(entries: [Lists.entry("api.example.com", 1)]))
        let config = try sandbox.writeConfig([("a", server.url("a"), "challenge")])
        #expect(ChildProcess.run(TestEnvironment.binary, ["update", "--config", config], timeout: 30).status == 0)

        var state = StoreState()
        state.retryAt = Int64.min
        state.consecutiveFailures = Int.max
        state.lastResult = .networkError
        try StateDirectory(path: sandbox.state.path).save(state, store: "a")

        let socket = try NotifySocket(abstract: false)
        let daemon = try DaemonProcess(config: config, environment: ["NOTIFY_SOCKET": socket.address])
        let messages = socket.collect(until: { $0.contains("READY=1") }, timeout: 15)
        #expect(messages.last?.contains("READY=1") == true, "got \(messages)")
        daemon.signal(SIGTERM)
        #expect(daemon.waitForExit(timeout: 5) == 0)
    }

    @Test("Backoff and DueTime at the extremes of what a state file can hold")
    func arithmeticAtTheExtremes() {
        let policy = UpdatePolicy()
        let random = SystemRandom()
        for failures in [Int.min, -1, 0, 1, 41, Int.max] {
            let at = Backoff.retryAt(now: 1_000, failures: failures, policy: policy, random: random)
            #expect(at > 1_000 && at <= 1_000 + policy.retryMax)
        }
        var state = StoreState()
        for retryAt in [Int64.min, -1, Int64.max] {
            state.retryAt = retryAt
            let due = DueTime.of(cache: nil, state: state, policy: policy, now: 1_000)
            #expect(due <= 1_000 + max(policy.periodicUpdateInterval, policy.retryMax))
        }
    }
}
