import Foundation
import Glibc

/// A real AF_UNIX datagram socket standing in for systemd's `$NOTIFY_SOCKET`.
final class NotifySocket: @unchecked Sendable {  // the fd is only read by the test that owns it
    let address: String
    private let fd: Int32
    private var pathToRemove: String?

    /// `abstract: true` binds `@name` in the abstract namespace, as systemd may.
    init(abstract: Bool = false) throws {
        fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw FixtureError("socket: \(String(cString: strerror(errno)))") }
        let name = "pinkeeper-notify-\(UUID().uuidString.prefix(8))"
        var addr = sockaddr_un()
        addr.sun_family = sa_family_t(AF_UNIX)
        let bytes: [UInt8]
        if abstract {
            address = "@" + name
            bytes = [0] + Array(name.utf8)
        } else {
            address = NSTemporaryDirectory() + name + ".sock"
            pathToRemove = address
            bytes = Array(address.utf8)
        }
        withUnsafeMutableBytes(of: &addr.sun_path) { raw in
            for (index, byte) in bytes.enumerated() { raw[index] = byte }
        }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + bytes.count)
        let bound = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
        }
        guard bound == 0 else { throw FixtureError("bind \(address): \(String(cString: strerror(errno)))") }
    }

    deinit {
        close(fd)
        if let pathToRemove { unlink(pathToRemove) }
    }

    /// The next datagram, or nil after `timeout` seconds.
    func receive(timeout: TimeInterval) -> String? {
        var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&poller, 1, Int32(timeout * 1000)) == 1 else { return nil }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let n = recv(fd, &buffer, buffer.count, 0)
        return n > 0 ? String(decoding: buffer[0..<n], as: UTF8.self) : nil
    }

    /// Reads messages until one satisfies `match` or the time runs out; returns all read, in order.
    func collect(until match: (String) -> Bool, timeout: TimeInterval) -> [String] {
        var seen: [String] = []
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline, let message = receive(timeout: deadline.timeIntervalSinceNow) {
            seen.append(message)
            if match(message) { break }
        }
        return seen
    }
}
