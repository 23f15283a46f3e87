import CLibssl
import Glibc
import PinKeeper

/// What one TLS handshake showed: whether OpenSSL's normal verification (a path to a trusted
/// root, and the host name) accepted the server, the chain it verified, and what the server sent.
struct TLSHandshake {
    /// DER certificates of the path OpenSSL built and verified, leaf first, ending with the
    /// trust anchor: index = depth. Empty unless verification succeeded. Only this chain may be
    /// compared with pins: the server may send any extra certificate, which path building ignores.
    var verifiedChain: [[UInt8]]
    /// DER certificates in the order the server sent them; shown when verification failed.
    var presentedChain: [[UInt8]]
    /// OpenSSL's reason when the chain or the host name did not verify; nil when both did.
    var verificationFailure: String?
    /// The address the connection reached, e.g. `127.0.0.1:8443`.
    var peer: String
    var protocolVersion: String
    var cipher: String
}

struct TLSConnectError: Error, CustomStringConvertible {
    enum Kind {
        /// The host name did not resolve (EX_NOHOST).
        case unknownHost
        /// No TCP connection, a timeout, or a handshake that did not complete (EX_UNAVAILABLE).
        case unavailable
        /// The configured CA file holds no usable certificate (EX_CONFIG).
        case caFile
        /// An OpenSSL object or the socket could not be set up (EX_SOFTWARE).
        case setup
    }

    var kind: Kind
    var description: String
}

/// `pinkeeper validate --connect`: a real TLS handshake with OpenSSL's libssl.
enum TLSConnect {
    /// Connects to `host:port`, sends `serverName` as SNI (unless it is an IP address) and
    /// verifies the chain for it against `caFile` alone when given (it replaces the default
    /// trust, as for list fetches), else against OpenSSL's default trust (which honours
    /// `SSL_CERT_FILE` and `SSL_CERT_DIR`). Verification runs in full but does not abort the
    /// handshake, so that the presented chain can be shown even when it is not trusted; no
    /// application data is ever sent.
    static func handshake(host: String, port: UInt16, serverName: String, caFile: String?,
                          timeoutSeconds: Int) throws(TLSConnectError) -> TLSHandshake {
        // A peer that closes first must not kill the process with SIGPIPE during the shutdown.
        signal(SIGPIPE, SIG_IGN)
        ERR_clear_error()
        guard let context = SSL_CTX_new(TLS_client_method()) else { throw setupError("SSL_CTX_new") }
        defer { SSL_CTX_free(context) }
        guard pinkeeper_SSL_CTX_set_min_proto_version(context, TLS1_2_VERSION) == 1 else {
            throw setupError("SSL_CTX_set_min_proto_version")
        }
        if let caFile {
            guard SSL_CTX_load_verify_file(context, caFile) == 1 else {
                throw TLSConnectError(kind: .caFile, description: "the store's ca_file \(caFile) holds no usable CA certificate\(drainErrors())")
            }
        } else {
            guard SSL_CTX_set_default_verify_paths(context) == 1 else { throw setupError("SSL_CTX_set_default_verify_paths") }
        }
        SSL_CTX_set_verify(context, SSL_VERIFY_NONE, nil)  // verified below, after the chain is in hand

        // The trust store is settled before the network is touched: a bad ca_file is reported
        // as such whether or not the host answers.
        let deadline = monotonicMilliseconds() + Int64(timeoutSeconds) * 1_000
        let (fd, peer) = try connectTCP(host: host, port: port, deadline: deadline)
        defer { close(fd) }
        try setBlocking(fd, deadline: deadline)

        guard let ssl = SSL_new(context) else { throw setupError("SSL_new") }
        defer { SSL_free(ssl) }
        guard SSL_set_fd(ssl, fd) == 1 else { throw setupError("SSL_set_fd") }
        if isIPAddress(serverName) {
            // RFC 6066: SNI carries host names only; an address is checked against the IP SANs.
            guard X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), serverName) == 1 else {
                throw setupError("X509_VERIFY_PARAM_set1_ip_asc")
            }
        } else {
            guard pinkeeper_SSL_set_tlsext_host_name(ssl, serverName) == 1 else { throw setupError("SSL_set_tlsext_host_name") }
            SSL_set_hostflags(ssl, UInt32(X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS))
            guard SSL_set1_host(ssl, serverName) == 1 else { throw setupError("SSL_set1_host") }
        }

        let result = SSL_connect(ssl)
        guard result == 1 else {
            let socketError = errno
            // A receive timeout surfaces as EAGAIN, or only as the deadline having passed.
            let timedOut = socketError == EAGAIN || socketError == EWOULDBLOCK || monotonicMilliseconds() >= deadline - 50
            let reason = timedOut ? "timed out after \(timeoutSeconds)s" : "failed\(drainErrors())"
            throw TLSConnectError(kind: .unavailable, description: "TLS handshake with \(peer) \(reason)")
        }
        defer { _ = SSL_shutdown(ssl) }

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
        return TLSHandshake(verifiedChain: verified, presentedChain: presented, verificationFailure: failure, peer: peer,
                            protocolVersion: String(cString: SSL_get_version(ssl)), cipher: cipher)
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

    // MARK: TCP

    private static func connectTCP(host: String, port: UInt16, deadline: Int64) throws(TLSConnectError) -> (Int32, String) {
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
            let fd = socket(info.pointee.ai_family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
            guard fd >= 0 else { failures.append("\(address): \(errorText(errno))"); continue }
            if let problem = finishConnect(fd, info.pointee.ai_addr, info.pointee.ai_addrlen, deadline: deadline) {
                close(fd)
                failures.append("\(address): \(problem)")
                continue
            }
            return (fd, address)
        }
        throw TLSConnectError(kind: .unavailable, description: "cannot connect to \(host) port \(port): \(failures.joined(separator: "; "))")
    }

    /// nil when connected; otherwise why not.
    private static func finishConnect(_ fd: Int32, _ address: UnsafeMutablePointer<sockaddr>?, _ length: socklen_t,
                                      deadline: Int64) -> String? {
        if connect(fd, address, length) == 0 { return nil }
        guard errno == EINPROGRESS else { return errorText(errno) }
        while true {
            let remaining = deadline - monotonicMilliseconds()
            guard remaining > 0 else { return "timed out" }
            var poller = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
            let ready = poll(&poller, 1, Int32(min(remaining, Int64(Int32.max))))
            if ready < 0 && errno == EINTR { continue }
            guard ready >= 0 else { return errorText(errno) }
            if ready == 0 { return "timed out" }
            var error: Int32 = 0
            var size = socklen_t(MemoryLayout<Int32>.size)
            guard getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &size) == 0 else { return errorText(errno) }
            return error == 0 ? nil : errorText(error)
        }
    }

    /// Back to blocking I/O for OpenSSL, with the time left as send and receive timeouts.
    private static func setBlocking(_ fd: Int32, deadline: Int64) throws(TLSConnectError) {
        let flags = fcntl(fd, F_GETFL)
        let remaining = max(1, deadline - monotonicMilliseconds())
        var limit = timeval(tv_sec: Int(remaining / 1_000), tv_usec: Int(remaining % 1_000) * 1_000)
        let size = socklen_t(MemoryLayout<timeval>.size)
        guard flags >= 0, fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) == 0,
              setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, size) == 0,
              setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &limit, size) == 0 else {
            throw TLSConnectError(kind: .setup, description: "cannot configure the socket: \(errorText(errno))")
        }
    }

    private static func describe(_ address: UnsafeMutablePointer<sockaddr>?, port: UInt16) -> String {
        guard let address else { return "?" }
        var text = [CChar](repeating: 0, count: Int(NI_MAXHOST))
        let length = socklen_t(address.pointee.sa_family == sa_family_t(AF_INET6)
            ? MemoryLayout<sockaddr_in6>.size : MemoryLayout<sockaddr_in>.size)
        guard getnameinfo(address, length, &text, socklen_t(text.count), nil, 0, NI_NUMERICHOST) == 0 else { return "?" }
        let host = String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
    }

    // MARK: Helpers

    static func isIPAddress(_ text: String) -> Bool {
        var v4 = in_addr(), v6 = in6_addr()
        return inet_pton(AF_INET, text, &v4) == 1 || inet_pton(AF_INET6, text, &v6) == 1
    }

    private static func setupError(_ call: String) -> TLSConnectError {
        TLSConnectError(kind: .setup, description: "\(call) failed\(drainErrors())")
    }

    /// The OpenSSL error queue as text, emptied.
    private static func drainErrors() -> String {
        var reasons: [String] = []
        while case let code = ERR_get_error(), code != 0 {
            var buffer = [CChar](repeating: 0, count: 256)
            ERR_error_string_n(code, &buffer, buffer.count)
            reasons.append(String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        return reasons.isEmpty ? "" : ": " + reasons.joined(separator: "; ")
    }

    private static func errorText(_ code: Int32) -> String { String(cString: strerror(code)) }

    private static func monotonicMilliseconds() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Int64(now.tv_sec) * 1_000 + Int64(now.tv_nsec) / 1_000_000
    }
}
