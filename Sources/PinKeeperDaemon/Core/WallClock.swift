import FoundationEssentials

/// Wall-clock time in Unix seconds; injected so the update policy is tested without waiting.
public protocol WallClock: Sendable {
    func now() -> Int64
}

public struct SystemClock: WallClock {
    public init() {}
    public func now() -> Int64 { Int64(Date().timeIntervalSince1970) }
}
