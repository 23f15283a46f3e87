/// How a store's list is signed, which decides what in it may be trusted (docs/protocol.md §3, §6).
public enum ListMode: String, Sendable, Codable {
    /// Mobile Utility Server: the whole body is signed over a fresh challenge, so every field counts.
    case challenge
    /// A static list whose entries carry their own signatures over `name&fingerprint&expires` only:
    /// its `depth` and `domainsConfig` are unsigned and never decide trust.
    case `static`
}
