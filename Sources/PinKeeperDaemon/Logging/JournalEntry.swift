public import Logging

/// The stable events an operator can query by `MESSAGE_ID=` (documented in docs/journal.md).
public enum LogEventID: String, Sendable, CaseIterable {
    case updateSucceeded = "update-succeeded"
    case updateFailed = "update-failed"
    case storeEmpty = "store-empty"
    case pinsExpiring = "pins-expiring"
    case pinsDropped = "pins-dropped"
    case listChanged = "list-changed"
    case probePinned = "probe-pinned"
    case probeUnpinned = "probe-unpinned"
    case probeExpiring = "probe-expiring"
    case probeError = "probe-error"
    case probeRefresh = "probe-refresh"
    case hookFinished = "hook-finished"
    case hookFailed = "hook-failed"

    /// journald message ids: 128-bit, fixed forever once published.
    public var messageID: String {
        switch self {
        case .updateSucceeded: "fea0a00742744d54a3c895f02958cb80"
        case .updateFailed: "41ed2e1a9bbd459d99ebcaea1209e405"
        case .storeEmpty: "affbeeb88ed249938a5ad4e693d5800f"
        case .pinsExpiring: "932547c34458409ca2154fa91ab0ec75"
        case .pinsDropped: "d0c2bfcb267743b6a162b68ce2a7b450"
        case .listChanged: "9ad81c42a5e64c3bb206e82f0b64212e"
        case .probePinned: "191e467d9bf74e6e87ad993ba2a7887a"
        case .probeUnpinned: "8b96f001b28a41cd9c3b4b530a66d0ff"
        case .probeExpiring: "6d3484ba66504c3c834e634d143b9b73"
        case .probeError: "4e65d0de4b614e6b8fd275c272bf650f"
        case .probeRefresh: "aa7251c0cd2f4dac816f4b2f2cb78838"
        case .hookFinished: "989bb80630fe4ce0a6de2fdccc3e008c"
        case .hookFailed: "2bc2d7dfbcdf4cc5827e27e76bb24ba2"
        }
    }

    /// The metadata key under which code names the event.
    public static let metadataKey = "event"

    /// The event `metadata` names under `metadataKey`, when it is one of these.
    init?(metadata: Logger.Metadata) {
        guard case .string(let name)? = metadata[Self.metadataKey] else { return nil }
        self.init(rawValue: name)
    }
}

/// One native journal entry: `FIELD=value` pairs built from a swift-log event. Values are
/// escaped like a line on stderr (LogText), so a field holds what the line shows.
public struct JournalEntry: Equatable, Sendable {
    public var fields: [(String, String)]

    public static func == (a: JournalEntry, b: JournalEntry) -> Bool {
        a.fields.map { "\($0.0)=\($0.1)" } == b.fields.map { "\($0.0)=\($0.1)" }
    }

    public subscript(field: String) -> String? { fields.first { $0.0 == field }?.1 }

    init(fields: [(String, String)]) { self.fields = fields }

    public init(level: Logger.Level, message: String, metadata: Logger.Metadata, file: String, function: String, line: UInt) {
        var fields: [(String, String)] = [
            ("MESSAGE", Self.message(message, metadata: metadata)),
            ("PRIORITY", String(Self.priority(level))),
            ("SYSLOG_IDENTIFIER", "pinkeeper"),
            ("CODE_FILE", LogText.escaped(file)), ("CODE_LINE", String(line)), ("CODE_FUNC", LogText.escaped(function)),
        ]
        if let id = LogEventID(metadata: metadata) { fields.append(("MESSAGE_ID", id.messageID)) }
        for key in metadata.keys.sorted() where key != LogEventID.metadataKey {
            fields.append((Self.fieldName(key), LogText.escaped("\(metadata[key]!)")))
        }
        self.fields = fields
    }

    /// `message key=value …` with sorted keys, so that `journalctl` alone shows the fields too; the
    /// event name is for MESSAGE_ID, not for people. Everything goes through LogText.
    static func message(_ message: String, metadata: Logger.Metadata) -> String {
        var text = LogText.escaped(message)
        for key in metadata.keys.sorted() where key != LogEventID.metadataKey {
            text += " \(LogText.escaped(key))=\(LogText.quoted("\(metadata[key]!)"))"
        }
        return text
    }

    /// syslog priorities, as journald stores them.
    static func priority(_ level: Logger.Level) -> Int {
        switch level {
        case .trace, .debug: 7
        case .info: 6
        case .notice: 5
        case .warning: 4
        case .error: 3
        case .critical: 2
        }
    }

    /// journald accepts field names of A–Z, 0–9 and `_`, not starting with `_` or a digit, at
    /// most 64 characters; anything else is silently dropped. Ours all start with `PINKEEPER_`.
    static func fieldName(_ key: String) -> String {
        let body = key.uppercased().unicodeScalars.map { scalar -> Character in
            (("A"..."Z").contains(scalar) || ("0"..."9").contains(scalar)) ? Character(scalar) : "_"
        }
        return String(("PINKEEPER_" + String(body)).prefix(64))
    }
}
