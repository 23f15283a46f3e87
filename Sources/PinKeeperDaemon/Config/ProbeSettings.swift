import PinKeeper

/// `HOST`, `HOST:PORT`, `[IPv6]` or `[IPv6]:PORT` as written in the configuration and on the
/// command line.
public struct Endpoint: Sendable, Hashable, CustomStringConvertible {
    public var host: String
    public var port: UInt16

    public init(host: String, port: UInt16) {
        self.host = host
        self.port = port
    }

    /// `host:port`, with an IPv6 address in brackets.
    public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }

    /// nil unless `text` is a host name (letters, digits, `-`, `_`, `.`; at most 253 characters)
    /// or an IP address, with an optional port 1–65535; a bare IPv6 address has no port.
    public static func parse(_ text: String, defaultPort: UInt16 = 443) -> Endpoint? {
        var host = text
        var port = defaultPort
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { return nil }
            host = String(text[text.index(after: text.startIndex)..<close])
            let rest = text[text.index(after: close)...]
            if !rest.isEmpty {
                guard rest.hasPrefix(":"), let value = UInt16(rest.dropFirst()), value > 0 else { return nil }
                port = value
            }
            return HostName.isIPAddress(host) && host.contains(":") ? Endpoint(host: host, port: port) : nil
        }
        if text.filter({ $0 == ":" }).count == 1, let colon = text.firstIndex(of: ":") {
            host = String(text[..<colon])
            guard let value = UInt16(text[text.index(after: colon)...]), value > 0 else { return nil }
            port = value
        }
        if host.contains(":") { return HostName.isIPAddress(host) ? Endpoint(host: host, port: port) : nil }
        return isHostName(host) ? Endpoint(host: host, port: port) : nil
    }

    private static func isHostName(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        guard (1...253).contains(bytes.count), bytes.first != UInt8(ascii: "."), bytes.first != UInt8(ascii: "-") else { return false }
        return bytes.allSatisfy { byte in
            (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: ".")
        }
    }
}

/// One host whose served certificate the daemon checks against a store's pins.
public struct ProbeTarget: Sendable, Equatable {
    /// The name the server must prove (SNI and the host-name check) and the pins are looked up
    /// under, with its port.
    public var endpoint: Endpoint
    /// Where to connect instead (`probe_connect_to`): a host reached through an internal address.
    public var connectTo: Endpoint?

    public init(endpoint: Endpoint, connectTo: Endpoint? = nil) {
        self.endpoint = endpoint
        self.connectTo = connectTo
    }

    /// The common name the pins are looked up under.
    public var name: String { endpoint.host }
    /// `host:port`: how status, metrics and the journal name the target.
    public var id: String { endpoint.description }
}

/// A store's probes (`probe`, `probe_interval`, `probe_ca_file`, `probe_connect_to`,
/// `min_probe_refresh`); `[defaults]` may set each key, and a store's own value replaces the default.
public struct ProbeSettings: Sendable, Equatable {
    public var targets: [ProbeTarget] = []
    public var interval: Int64 = 3_600
    /// The only CA certificates trusted for the probed servers; nil: the system trust store.
    public var caFile: String?
    /// Shortest time between two fetches of the store that its probes ask for (an unpinned or
    /// expiring host): the pinning service may list the host's new certificate already.
    public var minRefresh: Int64 = 300

    public init(targets: [ProbeTarget] = [], interval: Int64 = 3_600, caFile: String? = nil, minRefresh: Int64 = 300) {
        self.targets = targets
        self.interval = interval
        self.caFile = caFile
        self.minRefresh = minRefresh
    }
}
