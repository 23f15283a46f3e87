/// Why a document is not TOML 1.0, and where: 1-based line and column (in characters).
struct TOMLError: Error, Sendable, Equatable, CustomStringConvertible {
    var line: Int
    var column: Int
    var reason: String

    var description: String { "line \(line), column \(column): \(reason)" }
}

/// A table rule broken (a key or table defined twice, …); the reader adds the position.
struct TOMLRuleError: Error {
    var reason: String
    init(_ reason: String) { self.reason = reason }
}
