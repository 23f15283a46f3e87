/// How a store stands, as `status`, STATUS= and metrics describe it (PRODUCT.md §2).
/// `unknown`: valid pins remain but the state file could not be read, so the last result is unknown.
public enum StoreHealth: String, Sendable, Comparable, CaseIterable {
    case fresh, stale, unknown, failing, empty

    /// Worse health sorts later.
    private var rank: Int {
        switch self {
        case .fresh: 0
        case .stale: 1
        case .unknown: 2
        case .failing: 3
        case .empty: 4
        }
    }

    public static func < (a: StoreHealth, b: StoreHealth) -> Bool { a.rank < b.rank }

    public static func of(validPins: Int, lastResult: UpdateResult?, lastSuccess: Int64?, now: Int64,
                          periodicUpdateInterval: Int64, stateKnown: Bool = true) -> StoreHealth {
        if validPins == 0 { return .empty }
        if !stateKnown { return .unknown }
        if let lastResult, lastResult != .ok { return .failing }
        if let lastSuccess, now.saturatingSubtracting(lastSuccess) > periodicUpdateInterval.saturatingMultiplied(by: 2) { return .stale }
        return .fresh
    }
}

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
