import Foundation

/// Unix seconds as ISO 8601 UTC (`2026-11-29T02:00:00Z`) for logs and command output.
public enum Timestamp {
    public static func iso(_ seconds: Int64) -> String {
        ISO8601DateFormatter().string(from: Date(timeIntervalSince1970: TimeInterval(seconds)))
    }
}
