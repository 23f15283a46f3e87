import PinKeeper

/// One configured probe target as `pinkeeper status` shows it: the daemon's last result for it
/// from the state directory, nil until the daemon has probed it.
public struct ProbeStatus: Sendable, Equatable {
    public var store: String
    /// `host:port`.
    public var target: String
    /// The `probe_connect_to` address, if any.
    public var connectTo: String?
    public var record: ProbeRecord?

    public init(store: String, target: String, connectTo: String? = nil, record: ProbeRecord? = nil) {
        self.store = store
        self.target = target
        self.connectTo = connectTo
        self.record = record
    }

    /// Every target of `stores`, in configuration order; results for targets no longer configured are left out.
    static func collect(_ stores: [StoreConfig], stateDirectory: String) -> [ProbeStatus] {
        let state = ProbeStateDirectory(path: stateDirectory)
        return stores.flatMap { store -> [ProbeStatus] in
            guard !store.probe.targets.isEmpty else { return [] }
            let saved = state.load(store: store.id)
            return store.probe.targets.map { target in
                ProbeStatus(
                    store: store.id, target: target.id, connectTo: target.connectTo?.description,
                    record: saved.record(for: target.id))
            }
        }
    }
}

/// The probe parts of `pinkeeper status`: a table after the stores' (with a note for every
/// target that is not `pinned`), a `probes` array in the JSON, and gauges in the Prometheus text
/// (only when probes are configured, so that other setups keep exactly the metrics they had).
extension StatusReport {
    func probeTable() -> String {
        guard !probes.isEmpty else { return "" }
        var rows = [["PROBE", "STORE", "OUTCOME", "CHECKED", "SINCE", "LEAF EXPIRES"]]
        for probe in probes {
            let record = probe.record
            rows.append([
                probe.target + (probe.connectTo.map { " via \($0)" } ?? ""), probe.store,
                record?.outcome.rawValue ?? "-", record.map { relative($0.checked) } ?? "never",
                record.map { relative($0.since) } ?? "-", record?.leafExpires.map(relative) ?? "-",
            ])
        }
        let widths = rows[0].indices.map { column in rows.map { $0[column].count }.max() ?? 0 }
        var out = "\n"
        for row in rows {
            let cells = row.enumerated().map { column, cell in
                column == row.count - 1 ? cell : cell.padded(to: widths[column])
            }
            out += cells.joined(separator: "  ") + "\n"
        }
        for probe in probes {
            guard let record = probe.record else {
                out += "\(probe.store): probe \(probe.target): not probed yet (the daemon probes it every probe_interval)\n"
                continue
            }
            if record.outcome != .pinned { out += "\(probe.store): probe \(probe.target) \(record.outcome.rawValue): \(record.reason)\n" }
        }
        let probed = Set(probes.map(\.store))
        for store in stores where probed.contains(store.store) {
            guard let count = store.probeRefreshes, count > 0 else { continue }
            out += "\(store.store): \(count) update\(count == 1 ? "" : "s") asked for by probes (see min_probe_refresh)\n"
        }
        return out
    }

    func probesJSON() -> String {
        guard !probes.isEmpty else { return "[]" }
        func number(_ value: Int64?) -> String { value.map { "\($0)" } ?? "null" }
        func string(_ value: String?) -> String { value.map(jsonString) ?? "null" }
        let objects = probes.map { probe in
            let record = probe.record
            let fields: [(String, String)] = [
                ("store", jsonString(probe.store)),
                ("target", jsonString(probe.target)),
                ("connectTo", string(probe.connectTo)),
                ("outcome", string(record?.outcome.rawValue)),
                ("checked", number(record?.checked)),
                ("since", number(record?.since)),
                ("reason", string(record?.reason)),
                ("peer", string(record?.peer)),
                ("leafFingerprint", string(record?.leafFingerprint)),
                ("leafExpires", number(record?.leafExpires)),
            ]
            return "    {\n" + fields.map { "      \"\($0.0)\": \($0.1)" }.joined(separator: ",\n") + "\n    }"
        }
        return "[\n" + objects.joined(separator: ",\n") + "\n  ]"
    }

    func probePrometheus() -> String {
        guard !probes.isEmpty else { return "" }
        var out = ""
        func family(_ name: String, _ help: String, _ samples: [GaugeSample]) { out += Self.gauge(name, help, samples) }
        func labels(_ probe: ProbeStatus) -> [(String, String)] { [("store", probe.store), ("target", probe.target)] }

        family(
            "pinkeeper_probe_outcome",
            "Last probe of the host: 1 for its outcome (pinned, unpinned, expiring, error), 0 for the others (all 0: not probed yet).",
            probes.flatMap { probe in
                ProbeOutcome.allCases.map { outcome in
                    (labels(probe) + [("outcome", outcome.rawValue)], probe.record?.outcome == outcome ? 1 : 0)
                }
            })
        family(
            "pinkeeper_probe_last_check_timestamp_seconds", "When the host was last probed, in Unix seconds (0: never).",
            probes.map { (labels($0), $0.record?.checked ?? 0) })
        family(
            "pinkeeper_probe_outcome_since_timestamp_seconds",
            "Since when the last outcome has held, in Unix seconds (0: never probed).",
            probes.map { (labels($0), $0.record?.since ?? 0) })
        family(
            "pinkeeper_probe_leaf_expiry_timestamp_seconds",
            "notAfter of the leaf certificate the host served, in Unix seconds (0: unknown).",
            probes.map { (labels($0), $0.record?.leafExpires ?? 0) })
        let probed = Set(probes.map(\.store))
        out += Self.counter(
            "pinkeeper_store_probe_refreshes_total",
            "Fetches of the store that a probe asked for (an unpinned host, or pins running out before the next update).",
            stores.compactMap { store in
                guard probed.contains(store.store), let count = store.probeRefreshes else { return nil }
                return ([("store", store.store)], Int64(count))
            })
        return out
    }

    private func relative(_ time: Int64) -> String {
        if time == generated { return "now" }
        return time < generated
            ? "\(Units.describe(seconds: generated.saturatingSubtracting(time))) ago"
            : "in \(Units.describe(seconds: time.saturatingSubtracting(generated)))"
    }
}

extension ProbeStatus {
    /// What systemd's STATUS= line adds for probes, e.g. `; probes: 1 unpinned, 1 error
    /// (banking api.example.com:443 unpinned)`: empty while every probed target is pinned.
    public static func statusLineSuffix(_ configuration: Configuration) -> String {
        let records = collect(configuration.stores, stateDirectory: configuration.stateDirectory)
            .compactMap { probe in probe.record.map { (probe, $0.outcome) } }
        let order: [ProbeOutcome] = [.unpinned, .expiring, .error]
        let counts = order.compactMap { outcome -> String? in
            let count = records.filter { $0.1 == outcome }.count
            return count > 0 ? "\(count) \(outcome.rawValue)" : nil
        }
        guard let worst = order.lazy.compactMap({ outcome in records.first { $0.1 == outcome } }).first else { return "" }
        return "; probes: " + counts.joined(separator: ", ") + " (\(worst.0.store) \(worst.0.target) \(worst.1.rawValue))"
    }
}
