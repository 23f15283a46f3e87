import Glibc

/// Byte strings as the list and cache formats order them: a string's UTF-8 bytes in place, and
/// the order of two byte strings by one `memcmp`.
public enum RawBytes {
    /// A string's UTF-8 bytes in place (native strings are stored as UTF-8), copied only if not.
    public static func withUTF8<R>(_ text: String, _ body: (UnsafeRawBufferPointer) -> R) -> R {
        if let result = text.utf8.withContiguousStorageIfAvailable({ body(UnsafeRawBufferPointer($0)) }) { return result }
        return Array(text.utf8).withUnsafeBytes(body)
    }

    /// How two byte strings compare (< 0, 0, > 0), a prefix first.
    public static func order(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Int {
        let common = min(a.count, b.count)
        if common > 0 {
            let order = memcmp(a.baseAddress!, b.baseAddress!, common)
            if order != 0 { return Int(order) }
        }
        return a.count - b.count
    }
}
