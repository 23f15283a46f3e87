import PinKeeper

/// Which common name runs out of pins first: for each name only its latest-expiring pin counts
/// (a newer certificate replaces older ones), and the earliest of those is the one at risk.
public enum ExpiringPins {
    public static func soonest(_ pins: [Pin], now: Int64) -> Pin? {
        var latest: [String: Pin] = [:]
        for pin in pins where !pin.isExpired(at: now) {
            if let known = latest[pin.name], known.expires >= pin.expires { continue }
            latest[pin.name] = pin
        }
        return latest.values.min { ($0.expires, $0.name) < ($1.expires, $1.name) }
    }
}
