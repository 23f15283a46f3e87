import Foundation

/// One GET of a fingerprint list, with every limit the transfer must respect.
public struct HTTPRequest: Sendable {
    public var url: String
    /// Extra request headers as "Name: value".
    public var headers: [String]
    /// PEM bundle that replaces the system trust store for this server, if set.
    public var caFile: String?
    /// Whole-transfer limit, seconds.
    public var timeout: Int64
    public var maxResponseSize: Int

    public init(url: String, headers: [String] = [], caFile: String? = nil, timeout: Int64 = 30, maxResponseSize: Int = 1 << 20) {
        self.url = url
        self.headers = headers
        self.caFile = caFile
        self.timeout = timeout
        self.maxResponseSize = maxResponseSize
    }
}

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

    /// `Retry-After` as seconds from `now`: either delta-seconds or an HTTP date.
    public func retryAfter(now: Int64) -> Int64? {
        guard let value = header("retry-after")?.trimmingCharacters(in: .whitespaces) else { return nil }
        if let seconds = Int64(value) { return max(0, seconds) }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        guard let date = formatter.date(from: value) else { return nil }
        return max(0, Int64(date.timeIntervalSince1970) - now)
    }
}

/// Fetches one URL. The production implementation is libcurl; the seam lets the update
/// pipeline be exercised with canned responses.
public protocol HTTPFetching: Sendable {
    func fetch(_ request: HTTPRequest) async throws(UpdateFailure) -> HTTPResponse
}
