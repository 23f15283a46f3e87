public import PinKeeper

/// How a store's published pins would change, counted by pin identity: what `update --dry-run`
/// prints.
public struct PinChanges: Sendable, Equatable {
    /// Pins the store would trust that the published file lacks.
    public var added = 0
    /// Pins of the published file that stay.
    public var unchanged = 0
    /// Pins of the published file that go because they have expired.
    public var expired = 0
    /// Unexpired pins of the published file that go: no configured key vouches for them any more
    /// (a removed key, or challenge pins of an older pinkeeper that a verified response did not
    /// list), or an authoritative store's verified response no longer lists them.
    public var dropped = 0

    public init(published: [Pin], after: [Pin], now: Int64) {
        let kept = Set(after.map(\.identity))
        var seen = Set<Pin.Identity>()
        for pin in published where seen.insert(pin.identity).inserted {
            if kept.contains(pin.identity) {
                unchanged += 1
            } else if pin.isExpired(at: now) {
                expired += 1
            } else {
                dropped += 1
            }
        }
        added = kept.subtracting(seen).count
    }
}
