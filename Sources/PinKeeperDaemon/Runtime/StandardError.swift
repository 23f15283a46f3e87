import Glibc

/// Writes to file descriptor 2 directly, as `FileHandle.standardError` did, without Foundation.
/// Nothing is buffered, so lines from several threads never interleave mid-line
/// unless a single line exceeds what one write(2) takes.
public enum StandardError {
    public static func write(_ text: String) {
        var text = text
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
