import Foundation
import Glibc
import TestSupport

/// A real HTTP proxy (Debian's `tinyproxy`) on a free loopback port, one per test, started and
/// SIGKILLed by PID. Its log shows every CONNECT it was asked for.
final class ProxyServer: @unchecked Sendable {  // immutable after init except the process, which only `stop` touches
    static let executable = "/usr/bin/tinyproxy"

    let directory: URL
    let port: Int
    private let process: Process
    private var logFile: URL { directory.appendingPathComponent("tinyproxy.log") }

    /// `allowPorts`: the only ports it opens CONNECT tunnels to (others get 403); empty allows all.
    /// `credentials`: "user password" for Basic authentication (others get 407).
    init(allowPorts: [Int] = [], credentials: (user: String, password: String)? = nil) throws {
        guard FileManager.default.isExecutableFile(atPath: Self.executable) else {
            throw FixtureError("\(Self.executable) is missing: run scripts/install-deps.sh (it installs tinyproxy)")
        }
        directory = TestEnvironment.temporaryDirectory("proxy")
        // Port 0 is not an option for tinyproxy: take a free port from the kernel and retry
        // if another process grabs it before tinyproxy binds.
        var attempt = 0
        while true {
            attempt += 1
            let port = try Self.freePort()
            var lines = [
                "Port \(port)", "Listen 127.0.0.1", "Allow 127.0.0.1", "Timeout 30", "MaxClients 16",
                "LogFile \"\(directory.appendingPathComponent("tinyproxy.log").path)\"", "LogLevel Connect",
                "DisableViaHeader Yes",
            ]
            lines += allowPorts.map { "ConnectPort \($0)" }
            if let credentials { lines.append("BasicAuth \(credentials.user) \(credentials.password)") }
            let config = directory.appendingPathComponent("tinyproxy.conf")
            try (lines.joined(separator: "\n") + "\n").write(to: config, atomically: true, encoding: .utf8)
            let process = Process()
            process.executableURL = URL(fileURLWithPath: Self.executable)
            process.arguments = ["-d", "-c", config.path]  // -d: stay in the foreground, so the PID is tinyproxy's
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            if Self.waitForListener(port: port, process: process) {
                self.port = port
                self.process = process
                return
            }
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            if attempt == 3 {
                try? FileManager.default.removeItem(at: directory)
                throw FixtureError("tinyproxy did not start listening on 127.0.0.1 after 3 attempts")
            }
        }
    }

    deinit { stop() }

    func stop() {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        try? FileManager.default.removeItem(at: directory)
    }

    func url(credentials: String? = nil) -> String {
        "http://\(credentials.map { "\($0)@" } ?? "")127.0.0.1:\(port)"
    }

    /// The `host:port` targets of every CONNECT request the proxy received, in order.
    func connectTargets() -> [String] {
        guard let text = try? String(contentsOf: logFile, encoding: .utf8) else { return [] }
        return text.split(separator: "\n").compactMap { line in
            guard let range = line.range(of: "): CONNECT ") else { return nil }
            return line[range.upperBound...].split(separator: " ").first.map(String.init)
        }
    }

    /// A port nothing listens on right now (bound, read back, released).
    static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw FixtureError("socket() failed") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(fd, pointer, length) == 0 && getsockname(fd, pointer, &length) == 0
            }
        }
        guard bound else { throw FixtureError("cannot bind a loopback port") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    private static func waitForListener(port: Int, process: Process) -> Bool {
        let deadline = Date().addingTimeInterval(10)
        while process.isRunning && Date() < deadline {
            if canConnect(port: port) { return true }
            usleep(20_000)
        }
        return false
    }

    private static func canConnect(port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
    }
}
