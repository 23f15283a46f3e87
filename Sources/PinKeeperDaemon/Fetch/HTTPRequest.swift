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

    public init(
        url: String, headers: [String] = [], caFile: String? = nil, timeout: Int64 = 30, maxResponseSize: Int = 1 << 20,
        proxy: ProxySetting = .environment
    ) {
        self.url = url
        self.proxy = proxy
        self.headers = headers
        self.caFile = caFile
        self.timeout = timeout
        self.maxResponseSize = maxResponseSize
    }
}
