import Synchronization

/// How an event is written on stderr when stderr is not the journal: `log_format` in the main
/// file, or `--log-format`, which wins over it.
public enum LogFormat: String, Sendable, CaseIterable {
    /// `time=… level=… msg="…" store=banking …`: logfmt, one record per line (the default:
    /// readable in a terminal and in `podman logs` / `kubectl logs`, and parsed by Loki, Vector, …).
    case logfmt
    /// One JSON object per line, for collectors that index JSON fields.
    case json
}

/// The format the stderr handler writes now. swift-log's handler factory is set once per process,
/// before a reload can change `log_format`, so the handlers read the format from here instead.
public final class LogFormatSetting: Sendable {
    private let current: Mutex<LogFormat>

    public init(_ format: LogFormat) { current = Mutex(format) }

    public var format: LogFormat { current.withLock { $0 } }

    public func set(_ format: LogFormat) { current.withLock { $0 = format } }
}
