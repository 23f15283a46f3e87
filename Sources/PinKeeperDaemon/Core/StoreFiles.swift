/// The names of a store's files, in one place for every layer that derives them: the cache
/// directory's `<id>.json`, the state directory's `<id>.state.json`, `<id>.probes.json` and
/// `<id>.lock`. `FileClaims` relies on these four never coinciding for two valid ids.
public enum StoreFiles {
    public static func cache(_ store: String) -> String { "\(store).json" }
    public static func state(_ store: String) -> String { "\(store).state.json" }
    public static func probes(_ store: String) -> String { "\(store).probes.json" }
    public static func lock(_ store: String) -> String { "\(store).lock" }
}
