import Foundation
import Logging

/// Readable lines on stderr: `warning: update failed store=banking result=http-error reason="…"`.
/// Metadata keeps its order-independent form (sorted keys) so lines are easy to grep.
public struct ConsoleLogHandler: LogHandler {
    public var logLevel: Logger.Level
    public var metadata: Logger.Metadata = [:]
    private let label: String

    public init(label: String, level: Logger.Level) {
        self.label = label
        self.logLevel = level
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        let merged = metadata.merging(event.metadata ?? [:]) { $1 }
        let line = "\(event.level): " + Self.render(message: "\(event.message)", metadata: merged) + "\n"
        FileHandle.standardError.write(Data(line.utf8))
    }

    /// `message key=value …` with sorted keys; the event name is for MESSAGE_ID, not for people.
    static func render(message: String, metadata: Logger.Metadata) -> String {
        var line = message
        for key in metadata.keys.sorted() where key != LogEventID.metadataKey {
            line += " \(key)=\(quoted("\(metadata[key]!)"))"
        }
        return line
    }

    static func quoted(_ value: String) -> String {
        guard value.isEmpty || value.contains(where: { $0 == " " || $0 == "\"" || $0 == "=" }) else { return value }
        return "\"" + value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
    }
}
