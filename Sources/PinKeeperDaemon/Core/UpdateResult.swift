/// The outcome names operators see in logs, the journal, status and metrics (docs/protocol.md §4).
public enum UpdateResult: String, Sendable, Codable, CaseIterable {
    case ok
    case networkError = "network-error"
    case httpError = "http-error"
    case invalidSignature = "invalid-signature"
    case invalidData = "invalid-data"
    case storeEmpty = "store-empty"
    case writeFailed = "write-failed"
}

/// Why an update failed: the result class, a sentence for the operator and, for 429/503,
/// the server's requested delay.
public struct UpdateFailure: Error, Sendable, Equatable, CustomStringConvertible {
    public var result: UpdateResult
    public var reason: String
    public var retryAfter: Int64?

    public init(_ result: UpdateResult, _ reason: String, retryAfter: Int64? = nil) {
        self.result = result
        self.reason = reason
        self.retryAfter = retryAfter
    }

    public var description: String { "\(result.rawValue): \(reason)" }
}
