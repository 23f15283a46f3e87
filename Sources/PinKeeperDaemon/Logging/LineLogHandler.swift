public import Logging

/// Writes each event as one line on stderr, logfmt or JSON (`LogLine`), in the format the
/// shared `LogFormatSetting` holds when the event is logged: what `podman logs` and `kubectl
/// logs` show, and what a terminal shows when stderr is not the journal.
public struct LineLogHandler: LogHandler {
    public var logLevel: Logger.Level
    public var metadata: Logger.Metadata = [:]
    private let format: LogFormatSetting

    public init(level: Logger.Level, format: LogFormatSetting) {
        self.logLevel = level
        self.format = format
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        let line = LogLine(
            milliseconds: Timestamp.nowMilliseconds(), level: event.level, message: "\(event.message)",
            metadata: metadata.merging(event.metadata ?? [:]) { $1 })
        StandardError.write(line.text(format.format) + "\n")
    }
}
