/// What a hook wrote to one stream, kept up to `limit` bytes; the rest is read (so the hook never
/// blocks on a full pipe) and only counted, so a chatty hook cannot flood the journal.
struct CapturedOutput: Sendable, Equatable {
    let limit: Int
    private(set) var kept: [UInt8] = []
    private(set) var discarded = 0

    init(limit: Int) { self.limit = limit }

    mutating func append(_ bytes: ArraySlice<UInt8>) {
        let room = max(0, limit - kept.count)
        kept += bytes.prefix(room)
        discarded += max(0, bytes.count - room)
    }

    /// The text for the log: invalid UTF-8 becomes U+FFFD; the logger escapes control characters.
    var text: String {
        var text = String(decoding: kept, as: UTF8.self)
        if discarded > 0 { text += "… (\(discarded) more bytes not logged)" }
        return text
    }

    var isEmpty: Bool { kept.isEmpty && discarded == 0 }
}
