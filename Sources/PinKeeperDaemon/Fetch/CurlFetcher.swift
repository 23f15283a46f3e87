import CCurl
import Foundation
import Synchronization

/// HTTPS fetches through libcurl. Each transfer runs on a thread of its own (curl blocks),
/// driven by the multi interface so that task cancellation wakes it at once.
public struct CurlFetcher: HTTPFetching {
    public let userAgent: String

    public init(userAgent: String) {
        Self.globalInit
        self.userAgent = userAgent
    }

    /// curl_global_init is not thread-safe: run it once, before any transfer thread exists.
    private static let globalInit: Void = { curl_global_init(Int(CURL_GLOBAL_DEFAULT)) }()

    public func fetch(_ request: HTTPRequest) async throws(UpdateFailure) -> HTTPResponse {
        let transfer = CurlTransfer(request: request, userAgent: userAgent)
        let result: Result<HTTPResponse, UpdateFailure> = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let thread = Thread { continuation.resume(returning: transfer.run()) }
                thread.name = "pinkeeper-curl"
                thread.start()
            }
        } onCancel: {
            transfer.cancel()
        }
        return try result.get()
    }
}

/// One transfer's curl handles and buffers. Buffers are touched only by the transfer thread;
/// `cancel` uses an atomic and curl_multi_wakeup, which libcurl documents as callable from any thread.
final class CurlTransfer: @unchecked Sendable {  // safe: see above (thread-confined buffers, atomic cancel)
    let request: HTTPRequest
    let userAgent: String
    private let cancelled = Atomic<Bool>(false)
    /// The multi handle's address while a transfer runs (0 otherwise); raw pointers are not Sendable.
    private let multi = Mutex<UInt>(0)
    private var body = Data()
    private var headers: [String: String] = [:]
    private var tooLarge = false
    private let errorBuffer = UnsafeMutablePointer<CChar>.allocate(capacity: Int(CURL_ERROR_SIZE) + 1)

    init(request: HTTPRequest, userAgent: String) {
        self.request = request
        self.userAgent = userAgent
        errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
    }

    deinit { errorBuffer.deallocate() }

    func cancel() {
        cancelled.store(true, ordering: .sequentiallyConsistent)
        multi.withLock { address in
            if let handle = UnsafeMutableRawPointer(bitPattern: address) { _ = curl_multi_wakeup(handle) }
        }
    }

    func run() -> Result<HTTPResponse, UpdateFailure> {
        guard let easy = curl_easy_init() else { return .failure(UpdateFailure(.networkError, "curl_easy_init failed")) }
        defer { curl_easy_cleanup(easy) }
        var headerList: UnsafeMutablePointer<curl_slist>?
        defer { curl_slist_free_all(headerList) }
        for header in ["Accept: application/json"] + request.headers {
            headerList = curl_slist_append(headerList, header)
        }
        if let problem = configure(easy, headerList: headerList) {
            return .failure(UpdateFailure(.networkError, problem))
        }
        let code = perform(easy)
        if cancelled.load(ordering: .sequentiallyConsistent) {
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

    /// Sets every option; returns a message for the first one libcurl refuses.
    private func configure(_ easy: UnsafeMutableRawPointer, headerList: UnsafeMutablePointer<curl_slist>?) -> String? {
        let me = Unmanaged.passUnretained(self).toOpaque()
        let timeoutMs = request.timeout * 1000
        let longs: [(CURLoption, Int)] = [
            (CURLOPT_NOSIGNAL, 1),  // no SIGALRM from the resolver in a threaded program
            (CURLOPT_FOLLOWLOCATION, 1), (CURLOPT_MAXREDIRS, 5),
            (CURLOPT_SSL_VERIFYPEER, 1), (CURLOPT_SSL_VERIFYHOST, 2),
            (CURLOPT_TIMEOUT_MS, Int(timeoutMs)),
            (CURLOPT_CONNECTTIMEOUT_MS, Int(min(timeoutMs, 10_000))),
            // Abort a drip-feeding server: under 64 bytes/s for 10 s (or the whole timeout if shorter).
            (CURLOPT_LOW_SPEED_LIMIT, 64), (CURLOPT_LOW_SPEED_TIME, Int(min(request.timeout, 10))),
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

    /// Runs the transfer with the multi interface so `cancel()` can interrupt a poll at once.
    private func perform(_ easy: UnsafeMutableRawPointer) -> CURLcode {
        guard let handle = curl_multi_init() else { return CURLE_OUT_OF_MEMORY }
        multi.withLock { $0 = UInt(bitPattern: handle) }
        defer {
            multi.withLock { $0 = 0 }
            curl_multi_remove_handle(handle, easy)
            curl_multi_cleanup(handle)
        }
        guard curl_multi_add_handle(handle, easy) == CURLM_OK else { return CURLE_FAILED_INIT }
        var running: Int32 = 1
        while running > 0 && !cancelled.load(ordering: .sequentiallyConsistent) {
            guard curl_multi_perform(handle, &running) == CURLM_OK else { return CURLE_RECV_ERROR }
            if running > 0 { _ = curl_multi_poll(handle, nil, 0, 1000, nil) }
        }
        var pending: Int32 = 0
        while let message = curl_multi_info_read(handle, &pending) {
            if message.pointee.msg == CURLMSG_DONE { return message.pointee.data.result }
        }
        return cancelled.load(ordering: .sequentiallyConsistent) ? CURLE_ABORTED_BY_CALLBACK : CURLE_OK
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
        let text = detail.isEmpty ? String(cString: curl_easy_strerror(code)) : detail
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
        body.append(contentsOf: bytes)
        return true
    }

    fileprivate func receiveHeader(_ line: String) {
        if line.hasPrefix("HTTP/") {  // a new response (after a redirect or 100-continue)
            headers = [:]
            return
        }
        guard let colon = line.firstIndex(of: ":") else { return }
        let name = line[..<colon].lowercased()
        headers[name] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespacesAndNewlines)
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
