public import PinKeeper

/// Which common name runs out of pins first: for each name only its latest-expiring pin counts
/// (a newer certificate replaces older ones), and the earliest of those is the one at risk.
public enum ExpiringPins {
    public static func soonest(_ pins: [Pin], now: Int64) -> Pin? {
        LatestPins.indices(pins) { !pins[$0].isExpired(at: now) }.min { a, b in
            pins[a].expires != pins[b].expires
                ? pins[a].expires < pins[b].expires
                : pins[a].name.utf8.lexicographicallyPrecedes(pins[b].name.utf8)
        }.map { pins[$0] }
    }
}
