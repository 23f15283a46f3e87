/// A store setting that does not change what a fetch of the store does: where the store was
/// written, its change hook, its probes. Equal to every other value, so that the derived `==` of
/// `StoreConfig` and `UpdatePolicy` leaves it out and a reload that changes only such settings
/// fetches nothing. Every other setting counts by itself, a new one included: leaving a setting
/// out of the comparison takes this wrapper, at its declaration.
@propertyWrapper
public struct FetchNeutral<Value: Sendable>: Sendable, Equatable {
    public var wrappedValue: Value

    public init(wrappedValue: Value) { self.wrappedValue = wrappedValue }

    public static func == (_: Self, _: Self) -> Bool { true }
}
