import PinKeeper

/// `pinkeeper status --json`: times are Unix seconds and unknown values are `null` (never left
/// out), so that `jq '.stores[] | select(.health != "fresh")'` works on any store. Keys keep a
/// fixed order, the store id first.
extension StatusReport {
    public func json() -> String {
        var out = "{\n  \"generated\": \(generated),\n  \"stores\": ["
        for (index, store) in stores.enumerated() {
            out += index == 0 ? "\n" : ",\n"
            let fields: [(String, String)] = [
                ("store", Self.string(store.store)),
                ("health", Self.string(store.health.rawValue)),
                ("pins", "\(store.pins)"),
                ("fallbackPins", "\(store.fallbackPins)"),
                ("earliestExpiry", Self.number(store.earliestExpiry)),
                ("earliestExpiryName", store.earliestExpiryName.map(Self.string) ?? "null"),
                ("updated", Self.number(store.updated)),
                ("lastSuccess", Self.number(store.lastSuccess)),
                ("lastAttempt", Self.number(store.lastAttempt)),
                ("lastResult", store.lastResult.map { Self.string($0.rawValue) } ?? "null"),
                ("lastReason", store.lastReason.map(Self.string) ?? "null"),
                ("consecutiveFailures", store.consecutiveFailures.map { "\($0)" } ?? "null"),
                ("nextUpdate", Self.number(store.nextUpdate)),
                ("listDigest", store.listDigest.map(Self.string) ?? "null"),
                ("probeRefreshes", store.probeRefreshes.map { "\($0)" } ?? "null"),
                ("cacheFile", Self.string(store.cacheFile)),
                ("problems", "[" + store.problems.map(Self.string).joined(separator: ", ") + "]"),
            ]
            out += "    {\n" + fields.map { "      \"\($0.0)\": \($0.1)" }.joined(separator: ",\n") + "\n    }"
        }
        out += stores.isEmpty ? "]" : "\n  ]"
        return out + ",\n  \"probes\": " + probesJSON() + "\n}\n"
    }

    private static func number(_ value: Int64?) -> String { value.map { "\($0)" } ?? "null" }

    static func string(_ value: String) -> String { jsonString(value) }
}
