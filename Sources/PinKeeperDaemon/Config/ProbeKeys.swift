import FoundationEssentials

/// The probe keys, which `[defaults]` and every store may set: read, checked, and combined.
enum ProbeKeys {
    static let all = ["probe", "probe_interval", "probe_ca_file", "probe_connect_to", "min_probe_refresh"]

    /// A probe is a full TLS handshake: more often than this would only load the servers.
    static let shortestInterval: Int64 = 10

    /// The probe keys one table sets; nil where a key is absent.
    struct Written: Sendable {
        var targets: [Endpoint]?
        var interval: Int64?
        var caFile: String?
        var connectTo: [Endpoint: Endpoint]?
        var minRefresh: Int64?
    }

    static func read(_ table: TOMLTable, file: String, store: String?) throws(ConfigError) -> Written {
        let reader = Reader(table: table, file: file, store: store)
        return Written(
            targets: try reader.targets(), interval: try reader.interval(), caFile: try reader.caFile(),
            connectTo: try reader.connectTo(), minRefresh: try reader.minRefresh())
    }

    /// A store's probes: each of its own keys replaces the default. `probe_connect_to` written in
    /// the store itself must name its targets (a typo would otherwise probe the public address);
    /// one inherited from `[defaults]` applies to whichever targets it names.
    static func settings(own: Written, defaults: Written, file: String, store: String) throws(ConfigError) -> ProbeSettings {
        let endpoints = own.targets ?? defaults.targets ?? []
        let connectTo = own.connectTo ?? defaults.connectTo ?? [:]
        if let written = own.connectTo {
            for key in written.keys.sorted(by: { $0.description < $1.description }) where !endpoints.contains(key) {
                let known =
                    endpoints.isEmpty
                    ? "the store has no probe targets"
                    : "its probe targets are "
                        + endpoints.map(\.description).joined(separator: ", ")
                throw ConfigError(
                    file: file, store: store, key: "probe_connect_to",
                    "\"\(key)\" names no probe target of this store; \(known)")
            }
        }
        return ProbeSettings(
            targets: endpoints.map { ProbeTarget(endpoint: $0, connectTo: connectTo[$0]) },
            interval: own.interval ?? defaults.interval ?? ProbeSettings().interval,
            caFile: own.caFile ?? defaults.caFile,
            minRefresh: own.minRefresh ?? defaults.minRefresh ?? ProbeSettings().minRefresh)
    }

    private struct Reader {
        let table: TOMLTable
        let file: String
        let store: String?

        func error(_ key: String, _ problem: String) -> ConfigError {
            ConfigError(file: file, store: store, key: key, problem)
        }

        static let endpointForms = "\"api.example.com\", \"api.example.com:8443\" or \"[2001:db8::1]:443\""

        func targets() throws(ConfigError) -> [Endpoint]? {
            guard let value = table["probe"] else { return nil }
            guard let array = value.array else {
                throw error("probe", "must be an array of host names with optional ports, such as [\(Self.endpointForms)]")
            }
            var targets: [Endpoint] = []
            for (index, element) in array.enumerated() {
                guard let text = element.string, let endpoint = Endpoint.parse(text) else {
                    throw error(
                        "probe",
                        "entry \(index + 1) (\(element.string.map { "\"\($0)\"" } ?? "not a string")) must be a host name "
                            + "or address with an optional port: \(Self.endpointForms)")
                }
                guard !targets.contains(endpoint) else { throw error("probe", "lists \(endpoint) twice") }
                targets.append(endpoint)
            }
            return targets
        }

        func interval() throws(ConfigError) -> Int64? {
            try NumericKeys.probeInterval.read(table, file: file, store: store)
        }

        func minRefresh() throws(ConfigError) -> Int64? {
            try NumericKeys.minProbeRefresh.read(table, file: file, store: store)
        }

        func caFile() throws(ConfigError) -> String? {
            try ConfigLoader.readablePath(table, "probe_ca_file", file: file, store: store)
        }

        func connectTo() throws(ConfigError) -> [Endpoint: Endpoint]? {
            let key = "probe_connect_to"
            guard let value = table[key] else { return nil }
            guard let map = value.table else {
                throw error(
                    key,
                    "must be a table from probe target to the address to connect to, such as "
                        + "{ \"api.example.com:443\" = \"10.0.0.5:8443\" }")
            }
            var result: [Endpoint: Endpoint] = [:]
            for name in map.keys.sorted() {
                guard let target = Endpoint.parse(name) else {
                    throw error(key, "\"\(name)\" is not a probe target: \(Self.endpointForms)")
                }
                guard let text = map[name]?.string, let address = Endpoint.parse(text, defaultPort: target.port) else {
                    throw error(
                        key,
                        "the value for \"\(name)\" must be a string: a host name or address with an optional "
                            + "port (default \(target.port))")
                }
                guard result[target] == nil else { throw error(key, "names \(target) twice") }
                result[target] = address
            }
            return result
        }
    }
}
