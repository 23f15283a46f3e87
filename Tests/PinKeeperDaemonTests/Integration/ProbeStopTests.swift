import Foundation
import Glibc
import PinKeeper
@testable import PinKeeperDaemon
import TestSupport
import Testing
import Logging

/// Stop while a probe's handshake hangs, with the daemon's loop in this process: when
/// `Daemon.run` returns (the process would exit next), the probe's connection is closed.
@Suite("A stop waits for the probe pass")
struct ProbeStopTests {
    @Test("the probe's connection to a silent host is closed before Daemon.run returns", .timeLimit(.minutes(1)))
    func noConnectionOutlivesStop() async throws {
        let probe = try ProbeWorld("stop-connection")
        let silent = try SilentListener()
        let url = "https://127.0.0.1:1/list"
        try probe.configure(probe.probeKeys(port: silent.port, timeout: "60s"), url: url)
        // Pins as an update verified them: start-up fetches nothing, READY=1 comes at once.
        var leaf = probe.pin("leaf")
        leaf.key = try PublicKey(base64: TestEnvironment.publicKey(1)).id
        try probe.world.publish("api", [leaf], source: url, mode: .challenge)
        let configuration = try ConfigLoader.load(path: probe.world.config.path)
        let log = LogRecorder(), logger = log.logger
        let daemon = InProcessDaemon(configuration, logger: logger) { configuration in
            StoreUpdater(
                fetcher: CurlFetcher(userAgent: PinKeeperVersion.userAgent),
                cache: CacheDirectory(path: configuration.cacheDirectory),
                state: StateDirectory(path: configuration.stateDirectory), logger: logger)
        }
        // The probe's connection waits in the listener's backlog: the handshake hangs.
        var listening = pollfd(fd: silent.fd, events: Int16(POLLIN), revents: 0)
        #expect(await eventually(timeout: 20) { poll(&listening, 1, 0) == 1 }, "the probe never connected")

        await daemon.stop()
        #expect(daemon.notifier.texts.contains("STOPPING=1"))
        let connection = accept(silent.fd, nil, nil)
        try #require(connection >= 0, "accept: \(String(cString: strerror(errno)))")
        defer { close(connection) }
        _ = fcntl(connection, F_SETFL, O_NONBLOCK)
        // The ClientHello, then end of file: the daemon's side is closed. Still open: EAGAIN.
        var buffer = [UInt8](repeating: 0, count: 65_536)
        var received = 0
        var n = recv(connection, &buffer, buffer.count, 0)
        while n > 0 {
            received += n
            n = recv(connection, &buffer, buffer.count, 0)
        }
        #expect(n == 0, "the probe's connection is still open after the stop (\(received) bytes of its ClientHello read)")
        #expect(received > 0, "no ClientHello")
        #expect(log.all.allSatisfy { $0.level < .error }, "\(log.all.map(\.message))")
    }
}
