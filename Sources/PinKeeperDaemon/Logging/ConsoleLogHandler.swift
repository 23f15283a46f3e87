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
        StandardError.write(Self.line(level: event.level, message: "\(event.message)", metadata: merged))
    }

    /// The whole line written for one event, newline included.
    static func line(level: Logger.Level, message: String, metadata: Logger.Metadata) -> String {
        "\(level): " + render(message: message, metadata: metadata) + "\n"
    }

    /// `message key=value …` with sorted keys; the event name is for MESSAGE_ID, not for people.
    /// Everything goes through LogText, so the result is one line whatever the values hold.
    static func render(message: String, metadata: Logger.Metadata) -> String {
        var line = LogText.escaped(message)
        for key in metadata.keys.sorted() where key != LogEventID.metadataKey {
            line += " \(LogText.escaped(key))=\(LogText.quoted("\(metadata[key]!)"))"
        }
        return line
    }
}
