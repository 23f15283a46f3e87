public import FoundationEssentials

/// What a fetch brought back: the status, the headers and the decoded body.
public struct HTTPResponse: Sendable {
    public var status: Int
    /// Header names lowercased (HTTP names are case-insensitive); the last value wins.
    public var headers: [String: String]
    /// The entity after content decoding (gzip), which is what signatures cover.
    public var body: Data

    public init(status: Int, headers: [String: String], body: Data) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    public func header(_ name: String) -> String? { headers[name.lowercased()] }

    /// One header line as libcurl hands it over (`Name: value\r\n`): the name lowercased, the
    /// value without surrounding blanks; nil without a colon. The colon is found by Unicode
    /// scalars, as libcurl finds it by bytes: followed by a combining mark, it is part of a larger
    /// Character, and a search by Character would go on to a later colon.
    static func field(inHeaderLine line: String) -> (name: String, value: String)? {
        let scalars = line.unicodeScalars
        guard let colon = scalars.firstIndex(of: ":") else { return nil }
        return (String(scalars[..<colon]).lowercased(), Substring(scalars[scalars.index(after: colon)...]).trimmingBlanks(newlines: true))
    }

    /// `Retry-After` as seconds from `now`: either delta-seconds or an HTTP date.
    public func retryAfter(now: Int64) -> Int64? {
        guard let value = header("retry-after")?.trimmingBlanks() else { return nil }
        if let seconds = Int64(value) { return max(0, seconds) }
        return HTTPDate.parse(value).map { max(0, $0.saturatingSubtracting(now)) }
    }
}
