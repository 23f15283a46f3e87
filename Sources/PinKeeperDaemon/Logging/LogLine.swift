public import Logging
import PinKeeper

/// One event as one line on stderr, with what its journal entry carries: `time` (RFC 3339 UTC,
/// milliseconds), `level`, `msg`, `event` and `message_id` when the event has one, then every
/// metadata field, named after its journal field (`PINKEEPER_NEXT_UPDATE` is `next_update`).
/// Values are escaped exactly as in the journal (LogText), so a parsed value equals the journal's
/// and no value can end the line; docs/journal.md has the mapping.
public struct LogLine: Equatable, Sendable {
    /// Names and escaped values, in the order they are written.
    public private(set) var fields: [(String, String)]

    public static func == (a: LogLine, b: LogLine) -> Bool { a.fields.map { [$0.0, $0.1] } == b.fields.map { [$0.0, $0.1] } }

    public subscript(name: String) -> String? { fields.first { $0.0 == name }?.1 }

    /// `milliseconds`: Unix time of the event.
    public init(milliseconds: Int64, level: Logger.Level, message: String, metadata: Logger.Metadata) {
        fields = [("time", Timestamp.iso(milliseconds: milliseconds)), ("level", "\(level)"), ("msg", LogText.escaped(message))]
        if let event = metadata[LogEventID.metadataKey] {
            fields.append(("event", LogText.escaped("\(event)")))
            if let id = LogEventID(metadata: metadata) { fields.append(("message_id", id.messageID)) }
        }
        for key in metadata.keys.sorted() where key != LogEventID.metadataKey {
            fields.append((Self.name(key), LogText.escaped("\(metadata[key]!)")))
        }
    }

    /// The line's own names; a metadata field that would take one keeps its `pinkeeper_` prefix.
    static let ownNames: Set = ["time", "level", "msg", "event", "message_id"]

    /// The journal's field name, lower case, without `pinkeeper_`: one name per journal field
    /// and only `a`–`z`, `0`–`9` and `_`, so a name never needs quoting in either format.
    static func name(_ key: String) -> String {
        let field = JournalEntry.fieldName(key).lowercased()
        let short = String(field.dropFirst("pinkeeper_".count))
        return short.isEmpty || ownNames.contains(short) ? field : short
    }

    /// The line, without its newline.
    public func text(_ format: LogFormat) -> String {
        switch format {
        case .logfmt: fields.map { "\($0.0)=\(Self.logfmtValue($0.1))" }.joined(separator: " ")
        case .json: "{" + fields.map { "\(jsonString($0.0)):\(jsonString($0.1))" }.joined(separator: ",") + "}"
        }
    }

    /// An escaped value as one logfmt token: bare when it holds no space, `"` or `=` and is not
    /// empty; otherwise quoted, with `\\` and `\"` inside, so that a logfmt parser, which unquotes
    /// those escapes, reads back exactly the escaped value: the journal field's text.
    static func logfmtValue(_ escaped: String) -> String {
        guard LogText.needsQuotes(escaped) else { return escaped }
        return "\"" + escaped.replacingEvery("\\", with: "\\\\").replacingEvery("\"", with: "\\\"") + "\""
    }
}
