import Glibc
import Synchronization

/// Writes to file descriptor 2 directly, as `FileHandle.standardError` did, without Foundation.
/// Nothing is buffered, and one write at a time: a long line (a hook's escaped output) may take
/// several write(2) calls on a pipe, and a line from another thread must not land between them.
public enum StandardError {
    private static let writing = Mutex(())

    public static func write(_ text: String) {
        var text = text
        writing.withLock { _ in
            text.withUTF8 { bytes in
                var offset = 0
                while offset < bytes.count {
                    let written = Glibc.write(2, bytes.baseAddress! + offset, bytes.count - offset)
                    if written < 0 && errno == EINTR { continue }
                    guard written > 0 else { return }  // stderr closed or full: nothing better to do
                    offset += written
                }
            }
        }
    }
}
