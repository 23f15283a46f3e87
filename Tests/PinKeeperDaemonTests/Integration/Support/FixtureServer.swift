import Foundation
import Glibc
import TestSupport

/// The loopback pinning service (`Tests/Fixtures/pinserver.py`), one per test.
/// Routes are JSON files the test writes; the server re-reads them on every request.
final class FixtureServer: @unchecked Sendable {  // immutable after init except the process, which only `stop` touches
    let directory: URL
    let routes: URL
    let port: Int
    let httpPort: Int
    private let process: Process

    /// Serves `certificate.pem` (with its key) from the shared test CA's directory.
    /// `keepAlive`: normal replies keep the connection open (pinserver.py --keep-alive).
    convenience init(certificate: String = "server", keepAlive: Bool = false) throws {
        try self.init(
            certificateFile: TestEnvironment.certificate("\(certificate).pem"),
            keyFile: TestEnvironment.certificate("\(certificate).key"), keepAlive: keepAlive)
    }

    /// Serves the PEM certificates in `certificateFile`, leaf first, exactly as the file lists them,
    /// on `address` (127.0.0.1, or ::1), at `port` (0: any free one; another server's port after
    /// it stopped, to stand for that server with another certificate).
    init(certificateFile: String, keyFile: String, keepAlive: Bool = false, address: String = "127.0.0.1", port requested: Int = 0) throws {
        directory = TestEnvironment.temporaryDirectory("server")
        routes = directory.appendingPathComponent("routes")
        try FileManager.default.createDirectory(at: routes, withIntermediateDirectories: true)
        let portFile = directory.appendingPathComponent("port"), httpPortFile = directory.appendingPathComponent("http-port")
        process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments =
            [
                "python3", TestEnvironment.fixtures.appendingPathComponent("pinserver.py").path,
                "--routes", routes.path,
                "--cert", certificateFile, "--key", keyFile,
                "--port", "\(requested)", "--port-file", portFile.path, "--http-port-file", httpPortFile.path, "--address", address,
            ]
            + (keepAlive ? ["--keep-alive"] : [])
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let deadline = Date().addingTimeInterval(15)
        while !FileManager.default.fileExists(atPath: portFile.path) {
            guard process.isRunning, Date() < deadline else {
                kill(process.processIdentifier, SIGKILL)
                throw FixtureError("the fixture server did not start (is python3 with `cryptography` installed?)")
            }
            usleep(20_000)
        }
        port = Int(try String(contentsOf: portFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
        httpPort = Int(try String(contentsOf: httpPortFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
    }

    deinit { stop() }

    /// SIGKILL: a child of a Swift Testing process may inherit a blocked SIGTERM.
    func stop() {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        try? FileManager.default.removeItem(at: directory)
    }

    func url(_ route: String, host: String = "127.0.0.1") -> String { "https://\(host):\(port)/\(route)" }

    /// Writes a route file atomically (the server may be reading it).
    func route(_ name: String, _ spec: [String: Any]) throws {
        let data = try JSONSerialization.data(withJSONObject: spec)
        let target = routes.appendingPathComponent("\(name).json")
        let temp = routes.appendingPathComponent(".\(name).json.tmp")
        try data.write(to: temp)
        _ = Glibc.rename(temp.path, target.path)
    }

    /// One line of the server's request log.
    struct Request {
        var path: String
        var route: String
        var headers: [String: String]
        var status: Int?
        var scheme: String
        /// When the server received it (Unix seconds), before any `delay`.
        var time: Double = 0
        /// The TLS connection it came on, numbered from 1 in the order accepted.
        var connection = 0
        /// Whether that connection's handshake resumed an earlier TLS session.
        var tlsResumed = false
    }

    func requests(_ route: String? = nil) -> [Request] {
        guard let text = try? String(contentsOf: routes.appendingPathComponent("requests.log"), encoding: .utf8) else { return [] }
        return text.split(separator: "\n").compactMap { line in
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else { return nil }
            let request = Request(
                path: object["path"] as? String ?? "", route: object["route"] as? String ?? "",
                headers: object["headers"] as? [String: String] ?? [:],
                status: object["status"] as? Int, scheme: object["scheme"] as? String ?? "",
                time: object["time"] as? Double ?? 0, connection: object["connection"] as? Int ?? 0,
                tlsResumed: object["tls_resumed"] as? Bool ?? false)
            return route == nil || request.route == route ? request : nil
        }
    }
}

struct FixtureError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
