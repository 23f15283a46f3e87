import FoundationEssentials

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
    public var proxy: ProxySetting

    public init(url: String, headers: [String] = [], caFile: String? = nil, timeout: Int64 = 30, maxResponseSize: Int = 1 << 20,
                proxy: ProxySetting = .environment) {
        self.url = url
        self.proxy = proxy
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

/// The IMF-fixdate form of an HTTP date (`Sun, 06 Nov 1994 08:49:37 GMT`, RFC 9110 §5.6.7),
/// parsed by hand: it is server input, and Foundation's DateFormatter traps on some of it.
enum HTTPDate {
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
    private static let days = ["Mon,", "Tue,", "Wed,", "Thu,", "Fri,", "Sat,", "Sun,"]

    /// Unix seconds, or nil if `text` is not an IMF-fixdate.
    static func parse(_ text: String) -> Int64? {
        let parts = text.split(separator: " ")
        guard parts.count == 6, days.contains(String(parts[0])), parts[5] == "GMT",
              let day = Int(parts[1]), (1...31).contains(day),
              let month = months.firstIndex(of: String(parts[2])),
              parts[3].count == 4, let year = Int(parts[3]), year >= 1970 else { return nil }
        let clock = parts[4].split(separator: ":")
        guard clock.count == 3, clock.allSatisfy({ $0.count == 2 }),
              let hour = Int(clock[0]), let minute = Int(clock[1]), let second = Int(clock[2]),
              hour < 24, minute < 60, second < 61 else { return nil }
        return daysFromEpoch(year: year, month: month + 1, day: day) * 86_400
            + Int64(hour * 3_600 + minute * 60 + second)
    }

    /// Days since 1970-01-01 in the proleptic Gregorian calendar (400-year eras).
    private static func daysFromEpoch(year: Int, month: Int, day: Int) -> Int64 {
        let y = Int64(month <= 2 ? year - 1 : year)
        let era = y / 400
        let yearOfEra = y - era * 400
        let m = Int64(month)
        let dayOfYear = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + Int64(day) - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}

/// Fetches one URL. The production implementation is libcurl; the seam lets the update
/// pipeline be exercised with canned responses.
public protocol HTTPFetching: Sendable {
    func fetch(_ request: HTTPRequest) async throws(UpdateFailure) -> HTTPResponse
    /// Fetches will follow: start setting up what the first one would wait for, in parallel with
    /// the caller's other work. Optional: a fetch sets up whatever is missing itself.
    func prepare()
    /// Returns once what `prepare` started has finished; call it before the process exits.
    func preparationFinished() async
}

extension HTTPFetching {
    public func prepare() {}
    public func preparationFinished() async {}
}
