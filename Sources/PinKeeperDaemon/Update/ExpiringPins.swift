import PinKeeper

/// Which common name runs out of pins first: for each name only its latest-expiring pin counts
/// (a newer certificate replaces older ones), and the earliest of those is the one at risk.
public enum ExpiringPins {
    public static func soonest(_ pins: [Pin], now: Int64) -> Pin? {
        var latest: [PinName: Int] = [:]  // name → index of its latest-expiring pin (no copies of pins)
        latest.reserveCapacity(pins.count)
        for (index, pin) in pins.enumerated() where !pin.isExpired(at: now) {
            let name = PinName(pin.name)  // grouped as readers compare names
            if let known = latest[name], pins[known].expires >= pin.expires { continue }
            latest[name] = index
        }
        return latest.values.min { a, b in
            pins[a].expires != pins[b].expires
                ? pins[a].expires < pins[b].expires
                : pins[a].name.utf8.lexicographicallyPrecedes(pins[b].name.utf8)
        }.map { pins[$0] }
    }
}
