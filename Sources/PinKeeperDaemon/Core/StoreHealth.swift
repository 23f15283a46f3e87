/// How a store stands, as `status`, STATUS= and metrics describe it (pinkeeper(8), COMMANDS).
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

    public static func of(
        validPins: Int, lastResult: UpdateResult?, lastSuccess: Int64?, now: Int64,
        periodicUpdateInterval: Int64, stateKnown: Bool = true
    ) -> StoreHealth {
        if validPins == 0 { return .empty }
        if !stateKnown { return .unknown }
        if let lastResult, lastResult != .ok { return .failing }
        if let lastSuccess, now.saturatingSubtracting(lastSuccess) > periodicUpdateInterval.saturatingMultiplied(by: 2) { return .stale }
        return .fresh
    }
}
