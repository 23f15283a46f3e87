/// The one-line summary for systemd's STATUS=, e.g.
/// `3 stores: 2 fresh, 1 failing (banking: invalid-signature); next update in 5h`.
public enum StatusLine {
    public struct Entry: Sendable {
        public var store: String
        public var health: StoreHealth
        public var reason: String?
        public init(store: String, health: StoreHealth, reason: String?) {
            self.store = store
            self.health = health
            self.reason = reason
        }
    }

    public static func make(_ entries: [Entry], nextUpdateIn: Int64?) -> String {
        guard !entries.isEmpty else { return "no stores configured" }
        var counts: [String] = []
        for health in StoreHealth.allCases {
            let n = entries.filter { $0.health == health }.count
            if n > 0 { counts.append("\(n) \(health.rawValue)") }
        }
        var line = "\(entries.count) store\(entries.count == 1 ? "" : "s"): " + counts.joined(separator: ", ")
        if let worst = entries.max(by: { $0.health < $1.health }), worst.health != .fresh {
            line += " (\(worst.store): \(worst.reason ?? worst.health.rawValue))"
        }
        if let nextUpdateIn {
            line += nextUpdateIn > 0 ? "; next update in \(Units.describe(seconds: nextUpdateIn))" : "; next update now"
        }
        return line
    }
}
