import PinKeeper

/// Which common name runs out of pins first: for each name only its latest-expiring pin counts
/// (a newer certificate replaces older ones), and the earliest of those is the one at risk.
public enum ExpiringPins {
    public static func soonest(_ pins: [Pin], now: Int64) -> Pin? {
        var latest: [String: Int] = [:]  // name → index of its latest-expiring pin (no copies of pins)
        latest.reserveCapacity(pins.count)
        for (index, pin) in pins.enumerated() where !pin.isExpired(at: now) {
            if let known = latest[pin.name], pins[known].expires >= pin.expires { continue }
            latest[pin.name] = index
        }
        return latest.values.min { (pins[$0].expires, pins[$0].name) < (pins[$1].expires, pins[$1].name) }.map { pins[$0] }
    }
}
