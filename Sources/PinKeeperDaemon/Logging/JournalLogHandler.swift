import CSystemd
import Foundation
import Glibc
import Logging

/// Writes native journal entries with sd_journal_sendv, so fields like PINKEEPER_STORE can be
/// queried with `journalctl -u pinkeeper PINKEEPER_STORE=banking`.
public struct JournalLogHandler: LogHandler {
    public var logLevel: Logger.Level
    public var metadata: Logger.Metadata = [:]

    public init(level: Logger.Level) { self.logLevel = level }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        let entry = JournalEntry(level: event.level, message: "\(event.message)",
                                 metadata: metadata.merging(event.metadata ?? [:]) { $1 },
                                 file: event.file, function: event.function, line: event.line)
        Self.send(entry)
    }

    static func send(_ entry: JournalEntry) {
        let lines = entry.fields.map { "\($0.0)=\($0.1)" }
        // Each iovec points into a C copy of its field that lives until sendv returns.
        let buffers = lines.map { strdup($0) }
        defer { buffers.forEach { free($0) } }
        var vectors = zip(buffers, lines).map { buffer, line in
            iovec(iov_base: UnsafeMutableRawPointer(buffer), iov_len: line.utf8.count)
        }
        _ = sd_journal_sendv(&vectors, Int32(vectors.count))
    }

    /// True when stderr is connected to the journal: `$JOURNAL_STREAM` names stderr's device
    /// and inode (systemd.exec(5)). A redirected stderr gets readable lines instead.
    public static func stderrIsJournal(environment: [String: String] = ProcessInfo.processInfo.environment) -> Bool {
        guard let value = environment["JOURNAL_STREAM"] else { return false }
        let parts = value.split(separator: ":")
        guard parts.count == 2, let device = UInt64(parts[0]), let inode = UInt64(parts[1]) else { return false }
        var info = stat()
        guard fstat(STDERR_FILENO, &info) == 0 else { return false }
        return UInt64(info.st_dev) == device && UInt64(info.st_ino) == inode
    }
}
