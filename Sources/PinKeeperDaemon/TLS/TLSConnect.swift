import CLibssl
import Glibc
import PinKeeper
import Synchronization
import CSystemd

/// What one TLS handshake showed: whether OpenSSL's normal verification (a path to a trusted
/// root, and the host name) accepted the server, the chain it verified, and what the server sent.
public struct TLSHandshake: Sendable {
    /// DER certificates of the path OpenSSL built and verified, leaf first, ending with the
    /// trust anchor: index = depth. Empty unless verification succeeded. Only this chain may be
    /// compared with pins: the server may send any extra certificate, which path building ignores.
    public var verifiedChain: [[UInt8]]
    /// DER certificates in the order the server sent them; shown when verification failed.
    public var presentedChain: [[UInt8]]
    /// OpenSSL's reason when the chain or the host name did not verify; nil when both did.
    public var verificationFailure: String?
    /// The address the connection reached, e.g. `127.0.0.1:8443`.
    public var peer: String
    public var protocolVersion: String
    public var cipher: String
}

public struct TLSConnectError: Error, CustomStringConvertible, Sendable {
    public enum Kind: Sendable {
        /// The host name did not resolve (EX_NOHOST).
        case unknownHost
        /// No TCP connection, a timeout, or a handshake that did not complete (EX_UNAVAILABLE).
        case unavailable
        /// The CA file holds no usable certificate (EX_CONFIG).
        case caFile
        /// An OpenSSL object or the socket could not be set up (EX_SOFTWARE).
        case setup
        /// `TLSConnect.Cancellation.cancel()` was called (the daemon is stopping).
        case cancelled
    }

    public var kind: Kind
    public var description: String
}

/// A real TLS handshake with OpenSSL's libssl, for `pinkeeper validate --connect` and the
/// daemon's probes. It never sends application data, and every wait is bounded: sockets are
/// non-blocking and each wait polls against one deadline, so a server that accepts and then
/// stalls or drips bytes costs at most `timeoutSeconds`.
public enum TLSConnect {
    /// The longest certificate list accepted from a server (OpenSSL's default is 100 KiB): real
    /// chains are a few KiB; a hostile server must not make us buffer and parse more.
    public static let maxCertificateListBytes = 64 << 10
    /// The longest path verification may build (OpenSSL's default is 100).
    public static let maxChainDepth: Int32 = 10
    /// Connecting gets at most this long, like the connect timeout of list fetches.
    static let connectTimeoutMilliseconds: Int64 = 10_000

    /// Set from any thread to stop a handshake at its next wake-up (at most 200 ms later).
    public final class Cancellation: Sendable {
        private let flag = Atomic<Bool>(false)
        public init() {}
        public func cancel() { flag.store(true, ordering: .sequentiallyConsistent) }
        public var isCancelled: Bool { flag.load(ordering: .sequentiallyConsistent) }
    }

    /// Connects to `host:port`, sends `serverName` as SNI (unless it is an IP address) and
    /// verifies the chain for it against `caFile` alone when given (it replaces the default
    /// trust, as for list fetches), else against OpenSSL's default trust (which honours
    /// `SSL_CERT_FILE` and `SSL_CERT_DIR`). Verification runs in full but does not abort the
    /// handshake, so that the presented chain can be shown even when it is not trusted.
    /// Blocks the calling thread (name resolution cannot be interrupted); see the async variant.
    public static func handshake(
        host: String, port: UInt16, serverName: String, caFile: String?,
        timeoutSeconds: Int, cancellation: Cancellation? = nil
    ) throws(TLSConnectError) -> TLSHandshake {
        // The trust store is settled before the network is touched: a bad CA file is reported
        // as such whether or not the host answers.
        try handshake(
            host: host, port: port, serverName: serverName, context: TLSClientContext(caFile: caFile),
            timeoutSeconds: timeoutSeconds, cancellation: cancellation)
    }

    /// `handshake` with a trust store loaded once for many handshakes.
    public static func handshake(
        host: String, port: UInt16, serverName: String, context client: TLSClientContext,
        timeoutSeconds: Int, cancellation: Cancellation? = nil
    ) throws(TLSConnectError) -> TLSHandshake {
        // A peer that closes first must not kill the process with SIGPIPE during the shutdown.
        signal(SIGPIPE, SIG_IGN)
        ERR_clear_error()
        let context = client.context
        let start = monotonicMilliseconds()
        let deadline = Self.deadline(start: start, timeoutSeconds: timeoutSeconds)
        let wait = Waiter(deadline: deadline, cancellation: cancellation, timeoutSeconds: timeoutSeconds)
        let (fd, peer) = try connectTCP(
            host: host, port: port,
            waiter: wait.until(min(deadline, start + connectTimeoutMilliseconds)))
        defer { close(fd) }

        guard let ssl = SSL_new(context) else { throw setupError("SSL_new") }
        defer { SSL_free(ssl) }
        guard SSL_set_fd(ssl, fd) == 1 else { throw setupError("SSL_set_fd") }
        try expect(serverName, on: ssl)
        try finishHandshake(ssl, fd, peer: peer, waiting: wait)
        // close_notify, once and without waiting for the answer (the socket is non-blocking).
        defer { _ = SSL_shutdown(ssl) }

        return outcome(of: ssl, peer: peer)
    }

    /// The name OpenSSL verifies the certificate for. RFC 6066: SNI carries host names only; an
    /// address is checked against the certificate's IP addresses.
    private static func expect(_ serverName: String, on ssl: OpaquePointer) throws(TLSConnectError) {
        if HostName.isIPAddress(serverName) {
            guard X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), serverName) == 1 else {
                throw setupError("X509_VERIFY_PARAM_set1_ip_asc")
            }
        } else {
            guard pinkeeper_SSL_set_tlsext_host_name(ssl, serverName) == 1 else { throw setupError("SSL_set_tlsext_host_name") }
            SSL_set_hostflags(ssl, UInt32(X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS))
            guard SSL_set1_host(ssl, serverName) == 1 else { throw setupError("SSL_set1_host") }
        }
    }

    /// `SSL_connect` until the handshake ends, waiting for the socket in between.
    private static func finishHandshake(_ ssl: OpaquePointer, _ fd: Int32, peer: String, waiting wait: Waiter) throws(TLSConnectError) {
        while true {
            ERR_clear_error()
            let result = SSL_connect(ssl)
            if result == 1 { break }
            let socketError = errno
            switch SSL_get_error(ssl, result) {
            case SSL_ERROR_WANT_READ: try wait.ready(fd, Int16(POLLIN), doing: "TLS handshake with \(peer)")
            case SSL_ERROR_WANT_WRITE: try wait.ready(fd, Int16(POLLOUT), doing: "TLS handshake with \(peer)")
            case SSL_ERROR_SYSCALL where socketError != 0 && ERR_peek_error() == 0:
                throw TLSConnectError(kind: .unavailable, description: "TLS handshake with \(peer) failed: \(errorText(socketError))")
            default:
                let reasons = drainErrors()
                throw TLSConnectError(
                    kind: .unavailable,
                    description: "TLS handshake with \(peer) failed"
                        + (reasons.isEmpty ? ": the server closed the connection" : reasons))
            }
        }
    }

    /// The chains and the verification result of a finished handshake.
    private static func outcome(of ssl: OpaquePointer, peer: String) -> TLSHandshake {
        let presented = derCertificates(SSL_get_peer_cert_chain(ssl)) ?? []
        var verified: [[UInt8]] = []
        var failure: String?
        let verification = SSL_get_verify_result(ssl)
        if SSL_get0_peer_certificate(ssl) == nil || presented.isEmpty {
            failure = "the server presented no certificate"
        } else if verification != X509_V_OK {
            failure = String(cString: X509_verify_cert_error_string(verification))
        } else if let chain = derCertificates(SSL_get0_verified_chain(ssl)), !chain.isEmpty {
            verified = chain
        } else {
            failure = "OpenSSL did not report the verified chain"
        }
        let cipher = SSL_get_current_cipher(ssl).flatMap { SSL_CIPHER_get_name($0) }.map { String(cString: $0) } ?? "?"
        return TLSHandshake(
            verifiedChain: verified, presentedChain: presented, verificationFailure: failure, peer: peer,
            protocolVersion: String(cString: SSL_get_version(ssl)), cipher: cipher)
    }

    /// `handshake` on a thread of its own, so that neither the cooperative pool nor the daemon's
    /// loop ever waits on the network; cancelling the task stops the handshake within 200 ms.
    public static func handshake(
        host: String, port: UInt16, serverName: String, context: TLSClientContext,
        timeoutSeconds: Int
    ) async throws(TLSConnectError) -> TLSHandshake {
        let cancellation = Cancellation()
        let result: Result<TLSHandshake, TLSConnectError> = await withTaskCancellationHandler {
            await BlockingWork.run(named: "pinkeeper-tls") {
                Result { () throws(TLSConnectError) in
                    try handshake(
                        host: host, port: port, serverName: serverName, context: context,
                        timeoutSeconds: timeoutSeconds, cancellation: cancellation)
                }
            }
        } onCancel: {
            cancellation.cancel()
        }
        return try result.get()
    }

    /// The DER encodings of a `STACK_OF(X509)`, in stack order; nil when there is no stack or a
    /// certificate cannot be encoded (skipping it would shift every depth after it).
    private static func derCertificates(_ stack: OpaquePointer?) -> [[UInt8]]? {
        guard let stack else { return nil }
        var chain: [[UInt8]] = []
        for index in 0..<OPENSSL_sk_num(stack) {
            guard let raw = OPENSSL_sk_value(stack, index), let der = Certificate.encodeDER(OpaquePointer(raw)) else { return nil }
            chain.append(der)
        }
        return chain
    }

    // MARK: Waiting

    /// Every wait of one handshake: bounded by one deadline, and woken every 200 ms to notice
    /// cancellation.
    struct Waiter {
        var deadline: Int64
        var cancellation: Cancellation?
        var timeoutSeconds: Int

        func until(_ earlier: Int64) -> Waiter {
            Waiter(deadline: min(deadline, earlier), cancellation: cancellation, timeoutSeconds: timeoutSeconds)
        }

        /// Returns once `fd` has one of `events` (or an error or hang-up for the caller to find).
        func ready(_ fd: Int32, _ events: Int16, doing what: String) throws(TLSConnectError) {
            while true {
                if cancellation?.isCancelled == true { throw TLSConnectError(kind: .cancelled, description: "\(what) cancelled") }
                let remaining = deadline - monotonicMilliseconds()
                guard remaining > 0 else {
                    throw TLSConnectError(kind: .unavailable, description: "\(what) timed out after \(timeoutSeconds)s")
                }
                var poller = pollfd(fd: fd, events: events, revents: 0)
                let ready = poll(&poller, 1, Int32(min(remaining, 200)))
                if ready < 0 && errno == EINTR { continue }
                guard ready >= 0 else {
                    throw TLSConnectError(kind: .unavailable, description: "\(what) failed: poll: \(errorText(errno))")
                }
                if ready > 0 { return }
            }
        }
    }

    // MARK: TCP

    private static func connectTCP(host: String, port: UInt16, waiter: Waiter) throws(TLSConnectError) -> (Int32, String) {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = AI_ADDRCONFIG
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &list)
        guard status == 0, let first = list else {
            throw TLSConnectError(kind: .unknownHost, description: "cannot resolve \(host): \(String(cString: gai_strerror(status)))")
        }
        defer { freeaddrinfo(first) }
        var failures: [String] = []
        var next: UnsafeMutablePointer<addrinfo>? = first
        while let info = next {
            next = info.pointee.ai_next
            let address = describe(info.pointee.ai_addr, port: port)
            let fd = socket(
                info.pointee.ai_family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
            guard fd >= 0 else { failures.append("\(address): \(errorText(errno))"); continue }
            let problem: String?
            do {
                problem = try finishConnect(fd, info.pointee.ai_addr, info.pointee.ai_addrlen, waiter: waiter, address: address)
            } catch {
                close(fd)
                throw error
            }
            if let problem {
                close(fd)
                failures.append("\(address): \(problem)")
                continue
            }
            return (fd, address)
        }
        throw TLSConnectError(
            kind: .unavailable, description: "cannot connect to \(host) port \(port): \(failures.joined(separator: "; "))")
    }

    /// nil when connected; otherwise why not. Throws when the deadline passes or on cancellation.
    private static func finishConnect(
        _ fd: Int32, _ address: UnsafeMutablePointer<sockaddr>?, _ length: socklen_t,
        waiter: Waiter, address name: String
    ) throws(TLSConnectError) -> String? {
        if connect(fd, address, length) == 0 { return nil }
        guard errno == EINPROGRESS else { return errorText(errno) }
        try waiter.ready(fd, Int16(POLLOUT), doing: "connecting to \(name)")
        var error: Int32 = 0
        var size = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &size) == 0 else { return errorText(errno) }
        return error == 0 ? nil : errorText(error)
    }

    private static func describe(_ address: UnsafeMutablePointer<sockaddr>?, port: UInt16) -> String {
        guard let address else { return "?" }
        var text = [CChar](repeating: 0, count: Int(NI_MAXHOST))
        let length = socklen_t(
            address.pointee.sa_family == sa_family_t(AF_INET6)
                ? MemoryLayout<sockaddr_in6>.size : MemoryLayout<sockaddr_in>.size)
        guard getnameinfo(address, length, &text, socklen_t(text.count), nil, 0, NI_NUMERICHOST) == 0 else { return "?" }
        let host = String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
    }

    // MARK: Helpers

    static func setupError(_ call: String) -> TLSConnectError {
        TLSConnectError(kind: .setup, description: "\(call) failed\(drainErrors())")
    }

    /// The OpenSSL error queue as the end of a message (": reason; reason"), emptied.
    static func drainErrors() -> String {
        let reasons = OpenSSLErrorQueue.drain()
        return reasons.isEmpty ? "" : ": " + reasons.joined(separator: "; ")
    }

    private static func errorText(_ code: Int32) -> String { String(cString: strerror(code)) }

    /// The monotonic millisecond by which a handshake started at `start` must be done.
    static func deadline(start: Int64, timeoutSeconds: Int) -> Int64 {
        start.saturatingAdding(Int64(timeoutSeconds).saturatingMultiplied(by: 1_000))
    }

    static func monotonicMilliseconds() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Int64(now.tv_sec) * 1_000 + Int64(now.tv_nsec) / 1_000_000
    }
}
