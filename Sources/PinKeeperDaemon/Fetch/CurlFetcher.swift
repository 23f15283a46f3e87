import CCurl
import FoundationEssentials
import Synchronization

/// HTTPS fetches through libcurl. Transfers run on a `CurlDriver` (one multi handle and one
/// thread per ca_file and proxy setting), so concurrent and consecutive fetches from the same
/// server reuse connections and TLS sessions; task cancellation wakes the driver at once.
public struct CurlFetcher: HTTPFetching {
    public let userAgent: String
    /// How long a driver keeps its thread and idle connections after its last transfer.
    let linger: Duration

    public init(userAgent: String) {
        self.init(userAgent: userAgent, linger: CurlDriver.defaultLinger)
    }

    /// Tests choose the linger; fetchers with different lingers never share a driver.
    init(userAgent: String, linger: Duration) {
        self.userAgent = userAgent
        self.linger = linger
    }

    public func fetch(_ request: HTTPRequest) async throws(UpdateFailure) -> HTTPResponse {
        // Only commands that fetch load libcurl and its dependencies (and curl_global_init runs
        // then, once, see CurlLoader.c); they stay loaded until the process exits.
        if let failure = CurlLibrary.load() {
            throw UpdateFailure(.networkError, "cannot load libcurl (\(failure)): install libcurl4 (7.85 or later)")
        }
        let driver = CurlDriver.for(request, linger: linger)
        let transfer = CurlTransfer(request: request, userAgent: userAgent, driver: driver)
        let result: Result<HTTPResponse, UpdateFailure> = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                transfer.continuation = continuation  // before the driver can see the transfer
                driver.submit(transfer)
            }
        } onCancel: {
            transfer.cancel()
        }
        return try result.get()
    }

    /// Loads libcurl in the background (`pinkeeper update`, once it knows a store will be fetched).
    public func prepare() {
        CurlLibrary.preload()
    }

    public func preparationFinished() async {
        await CurlLibrary.awaitPreload()
    }
}

/// One transfer's curl handles and buffers. Everything but `cancelled` is touched only by the
/// driver thread once submitted (`continuation` is set before); `cancel` uses an atomic and
/// curl_multi_wakeup, which libcurl documents as callable from any thread.
final class CurlTransfer: @unchecked Sendable {  // safe: see above (driver-confined state, atomic cancel)
    let request: HTTPRequest
    let userAgent: String
    private let driver: CurlDriver
    private let cancelled = Atomic<Bool>(false)
    var continuation: CheckedContinuation<Result<HTTPResponse, UpdateFailure>, Never>?
    private(set) var easy: UnsafeMutableRawPointer?
    private var headerList: UnsafeMutablePointer<curl_slist>?
    private var body = Data()
    private var headers: [String: String] = [:]
    private var tooLarge = false
    private let errorBuffer = UnsafeMutablePointer<CChar>.allocate(capacity: Int(CURL_ERROR_SIZE) + 1)

    init(request: HTTPRequest, userAgent: String, driver: CurlDriver) {
        self.request = request
        self.userAgent = userAgent
        self.driver = driver
        errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
    }

    deinit { errorBuffer.deallocate() }

    var isCancelled: Bool { cancelled.load(ordering: .sequentiallyConsistent) }

    func cancel() {
        cancelled.store(true, ordering: .sequentiallyConsistent)
        driver.wake()
    }

    /// Driver thread: makes the easy handle and adds it to `multi`; false (and completed) when
    /// the transfer cannot start.
    func start(in multi: UnsafeMutableRawPointer, share: UnsafeMutableRawPointer?) -> Bool {
        if isCancelled {
            complete(.failure(UpdateFailure(.networkError, "transfer cancelled")))
            return false
        }
        guard let easy = pk_curl_easy_init() else {
            complete(.failure(UpdateFailure(.networkError, "curl_easy_init failed")))
            return false
        }
        self.easy = easy
        for header in ["Accept: application/json"] + request.headers {
            headerList = pk_curl_slist_append(headerList, header)
        }
        var problem = configure(easy, headerList: headerList)
        if problem == nil, let share, pk_curl_set_pointer(easy, CURLOPT_SHARE, share) != CURLE_OK {
            problem = "libcurl refused option \(CURLOPT_SHARE.rawValue)"
        }
        if problem == nil, pk_curl_multi_add_handle(multi, easy) != CURLM_OK { problem = "curl_multi_add_handle failed" }
        guard let problem else { return true }
        release(from: nil)
        complete(.failure(UpdateFailure(.networkError, problem)))
        return false
    }

    /// Driver thread: the transfer ended with `code` (or was cancelled); reports it and frees the
    /// easy handle. Its connection stays in the multi handle's cache for the next transfer.
    func finish(in multi: UnsafeMutableRawPointer, code: CURLcode) {
        let result = outcome(code)
        release(from: multi)
        complete(result)
    }

    func complete(_ result: Result<HTTPResponse, UpdateFailure>) {
        continuation?.resume(returning: result)
        continuation = nil
    }

    private func release(from multi: UnsafeMutableRawPointer?) {
        if let easy {
            if let multi { pk_curl_multi_remove_handle(multi, easy) }
            pk_curl_easy_cleanup(easy)
        }
        pk_curl_slist_free_all(headerList)
        (easy, headerList) = (nil, nil)
    }

    private func outcome(_ code: CURLcode) -> Result<HTTPResponse, UpdateFailure> {
        guard let easy else { return .failure(UpdateFailure(.networkError, "transfer not started")) }
        if isCancelled {
            return .failure(UpdateFailure(.networkError, "transfer cancelled"))
        }
        if tooLarge || code == CURLE_FILESIZE_EXCEEDED {
            return .failure(UpdateFailure(.invalidData, "response exceeds max_response_size (\(request.maxResponseSize) bytes)"))
        }
        guard code == CURLE_OK else { return .failure(UpdateFailure(.networkError, describe(code, easy))) }
        var status = 0
        _ = pk_curl_get_long(easy, CURLINFO_RESPONSE_CODE, &status)
        return .success(HTTPResponse(status: status, headers: headers, body: body))
    }

    /// `request_timeout` as libcurl's limits: the whole transfer and connecting, in milliseconds,
    /// and the seconds a transfer may stay below the low-speed limit.
    static func timeLimits(seconds: Int64) -> (total: Int, connect: Int, lowSpeed: Int) {
        let milliseconds = seconds.saturatingMultiplied(by: 1000)
        return (Int(milliseconds), Int(min(milliseconds, 10_000)), Int(min(seconds, 10)))
    }

    /// Sets every option; returns a message for the first one libcurl refuses.
    private func configure(_ easy: UnsafeMutableRawPointer, headerList: UnsafeMutablePointer<curl_slist>?) -> String? {
        let me = Unmanaged.passUnretained(self).toOpaque()
        let limits = Self.timeLimits(seconds: request.timeout)
        let longs: [(CURLoption, Int)] =
            [
                (CURLOPT_NOSIGNAL, 1),  // no SIGALRM from the resolver in a threaded program
                (CURLOPT_FOLLOWLOCATION, 1), (CURLOPT_MAXREDIRS, 5),
                (CURLOPT_SSL_VERIFYPEER, 1), (CURLOPT_SSL_VERIFYHOST, 2),
                (CURLOPT_TIMEOUT_MS, limits.total), (CURLOPT_CONNECTTIMEOUT_MS, limits.connect),
                // Abort a drip-feeding server: under 64 bytes/s for 10 s (or the whole timeout if shorter).
                (CURLOPT_LOW_SPEED_LIMIT, 64), (CURLOPT_LOW_SPEED_TIME, limits.lowSpeed),
                (CURLOPT_MAXFILESIZE_LARGE, request.maxResponseSize),
            ] + request.proxy.curlLongs
        for (option, value) in longs where pk_curl_set_long(easy, option, value) != CURLE_OK {
            return "libcurl refused option \(option.rawValue)"
        }
        var strings: [(CURLoption, String)] = [
            (CURLOPT_URL, request.url), (CURLOPT_USERAGENT, userAgent),
            (CURLOPT_PROTOCOLS_STR, "https"), (CURLOPT_REDIR_PROTOCOLS_STR, "https"),
            (CURLOPT_ACCEPT_ENCODING, "gzip"),
        ]
        if let caFile = request.caFile { strings.append((CURLOPT_CAINFO, caFile)) }
        // PROTOCOLS_STR limits the URL's scheme, not the proxy's: an http:// proxy still
        // carries only the https:// transfer, inside its CONNECT tunnel.
        strings += request.proxy.curlStrings
        for (option, value) in strings where pk_curl_set_string(easy, option, value) != CURLE_OK {
            return "libcurl refused option \(option.rawValue) (is libcurl built with OpenSSL, HTTPS and zlib?)"
        }
        var pointers: [(CURLoption, UnsafeMutableRawPointer?)] = [
            (CURLOPT_WRITEDATA, me), (CURLOPT_HEADERDATA, me), (CURLOPT_HTTPHEADER, UnsafeMutableRawPointer(headerList)),
            (CURLOPT_ERRORBUFFER, UnsafeMutableRawPointer(errorBuffer)),
        ]
        // ca_file replaces the system store: CAINFO alone would leave libcurl's compiled-in CA
        // directory (CAPATH, /etc/ssl/certs on Debian) trusted beside it.
        if request.caFile != nil { pointers.append((CURLOPT_CAPATH, nil)) }
        for (option, value) in pointers where pk_curl_set_pointer(easy, option, value) != CURLE_OK {
            return "libcurl refused option \(option.rawValue)"
        }
        _ = pk_curl_set_data_cb(easy, CURLOPT_WRITEFUNCTION, curlWrite)
        _ = pk_curl_set_data_cb(easy, CURLOPT_HEADERFUNCTION, curlHeader)
        return nil
    }

    /// The failure in words, naming the proxy (redacted) when one was in play; never its credentials.
    private func describe(_ code: CURLcode, _ easy: UnsafeMutableRawPointer) -> String {
        let environment = ProcessInfo.processInfo.environment
        let message = describe(code)
        guard let proxy = request.proxy.describedForFailure(environment: environment) else {
            return request.proxy.scrub(message, environment: environment)
        }
        var connectStatus = 0
        _ = pk_curl_get_long(easy, CURLINFO_HTTP_CONNECTCODE, &connectStatus)
        let explained: String
        if connectStatus == 407 || connectStatus == 401 {  // 407 is standard; some proxies (tinyproxy) answer 401
            explained = "the \(proxy) refused the CONNECT tunnel with HTTP \(connectStatus): check the proxy's user name and password"
        } else if connectStatus >= 300 {
            explained = "the \(proxy) refused the CONNECT tunnel with HTTP \(connectStatus)"
        } else if code == CURLE_COULDNT_RESOLVE_PROXY {
            explained = "cannot resolve the \(proxy) (\(message))"
        } else if code == CURLE_COULDNT_CONNECT, case .http = request.proxy {
            // With a proxy configured, the proxy is the only host libcurl connects to.
            explained = "cannot connect to the \(proxy) (\(message))"
        } else {
            explained = "\(message) (through the \(proxy))"
        }
        return request.proxy.scrub(explained, environment: environment)
    }

    private func describe(_ code: CURLcode) -> String {
        let detail = String(cString: errorBuffer)
        let text = detail.isEmpty ? String(cString: pk_curl_easy_strerror(code)) : detail
        switch code {
        case CURLE_UNSUPPORTED_PROTOCOL: return "refused a non-HTTPS URL or redirect (\(text))"
        case CURLE_TOO_MANY_REDIRECTS: return "too many redirects (\(text))"
        case CURLE_OPERATION_TIMEDOUT: return "timed out (\(text))"
        case CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CACERT_BADFILE:
            return "TLS verification failed; check ca_file and the server certificate (\(text))"
        case CURLE_COULDNT_RESOLVE_HOST: return "cannot resolve host (\(text))"
        case CURLE_COULDNT_CONNECT: return "cannot connect (\(text))"
        default: return "curl error \(code.rawValue): \(text)"
        }
    }

    fileprivate func receive(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard body.count + bytes.count <= request.maxResponseSize else {
            tooLarge = true
            return false
        }
        if body.isEmpty, let size = expectedBodySize { body = Data(capacity: size) }
        body.append(contentsOf: bytes)
        return true
    }

    /// The announced `Content-Length` of an uncompressed body within `max_response_size`: the
    /// buffer is made that size once instead of doubling as the bytes arrive, which held the old
    /// and the new buffer at once (a 22 MB list peaked at 75 MiB). Only a hint: a body that turns
    /// out longer still grows, and the limit is checked on every chunk as before.
    private var expectedBodySize: Int? {
        guard headers["content-encoding"] == nil, let text = headers["content-length"], let size = Int(text),
            size > 0, size <= request.maxResponseSize
        else { return nil }
        return size
    }

    fileprivate func receiveHeader(_ line: String) {
        if line.hasPrefix("HTTP/") {  // a new response (after a redirect or 100-continue)
            headers = [:]
            return
        }
        guard let (name, value) = HTTPResponse.field(inHeaderLine: line) else { return }
        headers[name] = value
    }
}

private func curlWrite(_ data: UnsafeMutablePointer<CChar>?, _ size: Int, _ count: Int, _ context: UnsafeMutableRawPointer?) -> Int {
    guard let context else { return 0 }
    let transfer = Unmanaged<CurlTransfer>.fromOpaque(context).takeUnretainedValue()
    // Returning fewer bytes than given makes libcurl abort with CURLE_WRITE_ERROR.
    return transfer.receive(UnsafeRawBufferPointer(start: data, count: size * count)) ? size * count : 0
}

private func curlHeader(_ data: UnsafeMutablePointer<CChar>?, _ size: Int, _ count: Int, _ context: UnsafeMutableRawPointer?) -> Int {
    guard let context, let data else { return 0 }
    let transfer = Unmanaged<CurlTransfer>.fromOpaque(context).takeUnretainedValue()
    let bytes = UnsafeRawBufferPointer(start: data, count: size * count)
    transfer.receiveHeader(String(decoding: bytes, as: UTF8.self))
    return size * count
}
