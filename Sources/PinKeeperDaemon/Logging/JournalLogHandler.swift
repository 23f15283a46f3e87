import CSystemd
public import FoundationEssentials
import Glibc
public import Logging

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
        let entry = JournalEntry(
            level: event.level, message: "\(event.message)",
            metadata: metadata.merging(event.metadata ?? [:]) { $1 },
            file: event.file, function: event.function, line: event.line)
        Self.send(entry)
    }

    static func send(_ entry: JournalEntry) {
        _ = withFieldVectors(entry) { sd_journal_sendv($0, $1) }
    }

    /// Calls `body` with one iovec per field, each covering exactly the UTF-8 bytes of
    /// `NAME=value`. libsystemd reads `iov_len` bytes and no terminator, so the buffer must hold
    /// every byte of the value, a NUL included (a C-string copy would stop there and let
    /// libsystemd read past it). Separated from the send so tests can read the bytes back.
    static func withFieldVectors<R>(_ entry: JournalEntry, _ body: (UnsafePointer<iovec>, Int32) -> R) -> R {
        let buffers = entry.fields.map { name, value in
            let bytes = Array("\(name)=\(value)".utf8)
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: bytes.count, alignment: 1)
            buffer.copyBytes(from: bytes)
            return buffer
        }
        defer { buffers.forEach { $0.deallocate() } }
        let vectors = buffers.map { iovec(iov_base: $0.baseAddress, iov_len: $0.count) }
        return vectors.withUnsafeBufferPointer { body($0.baseAddress!, Int32($0.count)) }
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
