/// `pinkeeper status`: one row per store with times relative to now, then one line per store
/// that needs attention saying why. The LIST column is the list digest's first 12 hex digits,
/// enough to compare hosts by eye (`--json` has it whole).
extension StatusReport {
    public func table() -> String {
        guard !stores.isEmpty else { return "no stores configured\n" }
        var rows = [["STORE", "HEALTH", "PINS", "EARLIEST EXPIRY", "LAST SUCCESS", "LAST ATTEMPT", "NEXT UPDATE", "LIST"]]
        for store in stores {
            let pins = store.fallbackPins > 0 ? "\(store.pins)+\(store.fallbackPins) fallback" : "\(store.pins)"
            let attempt = store.lastAttempt.map { "\(store.lastResult?.rawValue ?? "?") \(ago($0))" } ?? "never"
            rows.append([
                store.store, store.health.rawValue, pins, store.earliestExpiry.map(ahead) ?? "-",
                store.lastSuccess.map(ago) ?? "never", store.consecutiveFailures == nil ? "unknown" : attempt,
                store.nextUpdate.map(ahead) ?? "unknown", store.listDigest.map { String($0.prefix(12)) } ?? "-",
            ])
        }
        let widths = rows[0].indices.map { column in rows.map { $0[column].count }.max() ?? 0 }
        var out = ""
        for row in rows {
            let cells = row.enumerated().map { column, cell in
                column == row.count - 1 ? cell : cell.padded(to: widths[column])
            }
            out += cells.joined(separator: "  ") + "\n"
        }
        for store in stores { out += notes(store).map { "\(store.store): \($0)\n" }.joined() }
        return out + probeTable()
    }

    private func notes(_ store: StoreStatus) -> [String] {
        var notes = store.problems
        if let result = store.lastResult, result != .ok {
            let failures = store.consecutiveFailures ?? 0
            let count = failures == 1 ? "1 failure" : "\(failures) consecutive failures"
            notes.append("last attempt failed: \(result.rawValue)\(store.lastReason.map { ": \(LogText.escaped($0))" } ?? "") (\(count))")
        }
        if store.health == .stale, let success = store.lastSuccess {
            notes.append("last success \(ago(success)) is older than twice the periodic update interval")
        }
        if store.health == .empty && store.authoritative && store.lastResult == .storeEmpty {
            notes.append(
                "no valid pin: the pinning service's last verified list named none (authoritative), so every validation answers empty")
        } else if store.health == .empty {
            notes.append("no valid pin: every validation answers empty; run `pinkeeper update --store \(store.store)`")
        }
        return notes
    }

    private func ago(_ time: Int64) -> String {
        time >= generated ? "just now" : "\(Units.describe(seconds: generated.saturatingSubtracting(time))) ago"
    }

    private func ahead(_ time: Int64) -> String {
        time <= generated ? "now" : "in \(Units.describe(seconds: time.saturatingSubtracting(generated)))"
    }
}
