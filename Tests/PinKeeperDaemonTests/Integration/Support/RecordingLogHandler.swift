import Logging
import Synchronization

/// Keeps every log entry so a test can assert "one clear line naming the store and the reason".
final class LogRecorder: Sendable {
    struct Entry: Sendable {
        var level: Logger.Level
        var message: String
        var metadata: [String: String]
    }

    private let entries = Mutex<[Entry]>([])

    var all: [Entry] { entries.withLock { $0 } }

    func errors(store: String) -> [Entry] {
        all.filter { $0.level >= .error && $0.metadata["store"] == store }
    }

    func warnings(store: String) -> [Entry] {
        all.filter { $0.level == .warning && $0.metadata["store"] == store }
    }

    var logger: Logger {
        Logger(label: "test") { _ in Handler(recorder: self) }
    }

    fileprivate func append(_ entry: Entry) { entries.withLock { $0.append(entry) } }

    private struct Handler: LogHandler {
        let recorder: LogRecorder
        var logLevel: Logger.Level = .trace
        var metadata: Logger.Metadata = [:]

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            let merged = metadata.merging(event.metadata ?? [:]) { $1 }
            recorder.append(
                Entry(
                    level: event.level, message: "\(event.message)",
                    metadata: merged.mapValues { "\($0)" }))
        }
    }
}
