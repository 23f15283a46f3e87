/// The Prometheus text exposition format (version 0.0.4) of a status report: what
/// `pinkeeper status --format prometheus` prints and the daemon writes to `metrics_file` for
/// node_exporter's textfile collector. Every family has HELP and TYPE lines and all of its
/// samples together; unknown timestamps are 0 so that "older than" alerts fire on them. The next
/// update and the failure count of a store whose state file cannot be read have no sample, nor
/// has the list digest of a store that has none yet.
extension StatusReport {
    public func prometheus() -> String {
        var out = ""
        func family(_ name: String, _ help: String, _ samples: [GaugeSample]) { out += Self.gauge(name, help, samples) }
        func perStore(_ value: (StoreStatus) -> Int64?) -> [GaugeSample] {
            stores.compactMap { store in value(store).map { ([("store", store.store)], $0) } }
        }

        family(
            "pinkeeper_store_health",
            "Health of the store: 1 for its current state (fresh, stale, unknown, failing, empty), 0 for the others.",
            stores.flatMap { store in
                StoreHealth.allCases.map { health in
                    ([("store", store.store), ("health", health.rawValue)], store.health == health ? 1 : 0)
                }
            })
        family("pinkeeper_store_pins", "Unexpired pins in the published cache file.", perStore { Int64($0.pins) })
        family(
            "pinkeeper_store_fallback_pins", "Unexpired pins from the store's fallback_file.",
            perStore { Int64($0.fallbackPins) })
        family(
            "pinkeeper_store_earliest_expiry_timestamp_seconds",
            "When the first common name loses its last valid pin, in Unix seconds (0: no valid pin).",
            perStore { $0.earliestExpiry ?? 0 })
        family(
            "pinkeeper_store_last_success_timestamp_seconds",
            "Last successful, verified update, in Unix seconds (0: never).", perStore { $0.lastSuccess ?? 0 })
        family(
            "pinkeeper_store_last_attempt_timestamp_seconds",
            "Last update attempt, in Unix seconds (0: never).", perStore { $0.lastAttempt ?? 0 })
        family(
            "pinkeeper_store_last_attempt_result",
            "Result of the last update attempt: 1 for its result, 0 for the others (all 0: no attempt yet).",
            stores.flatMap { store in
                UpdateResult.allCases.map { result in
                    ([("store", store.store), ("result", result.rawValue)], store.lastResult == result ? 1 : 0)
                }
            })
        family(
            "pinkeeper_store_next_update_timestamp_seconds",
            "When the daemon fetches the store next (regular update or retry), in Unix seconds.",
            perStore { $0.nextUpdate })
        family(
            "pinkeeper_store_consecutive_failures", "Failed update attempts since the last success.",
            perStore { $0.consecutiveFailures.map(Int64.init) })
        family(
            "pinkeeper_store_list_info",
            "1, with the digest of the last verified list the pinning service served (hosts served the same list agree).",
            stores.compactMap { store in store.listDigest.map { ([("store", store.store), ("digest", $0)], 1) } })
        return out + probePrometheus()
    }

    typealias GaugeSample = (labels: [(String, String)], value: Int64)

    /// One gauge family: HELP and TYPE lines, then all of its samples together.
    static func gauge(_ name: String, _ help: String, _ samples: [GaugeSample]) -> String {
        family(name, help, type: "gauge", samples)
    }

    private static func family(_ name: String, _ help: String, type: String, _ samples: [GaugeSample]) -> String {
        var out = "# HELP \(name) \(help)\n# TYPE \(name) \(type)\n"
        for sample in samples {
            let labels = sample.labels.map { "\($0.0)=\"\(escapeLabel($0.1))\"" }.joined(separator: ",")
            out += "\(name){\(labels)} \(sample.value)\n"
        }
        return out
    }

    /// One counter family: like `gauge`, with TYPE counter (a `_total` name that only grows).
    static func counter(_ name: String, _ help: String, _ samples: [GaugeSample]) -> String {
        family(name, help, type: "counter", samples)
    }

    /// Label values escape backslash, double quote and line feed.
    static func escapeLabel(_ value: String) -> String {
        var out = ""
        for character in value {
            switch character {
            case "\\": out += "\\\\"
            case "\"": out += "\\\""
            case "\n": out += "\\n"
            default: out.append(character)
            }
        }
        return out
    }
}
