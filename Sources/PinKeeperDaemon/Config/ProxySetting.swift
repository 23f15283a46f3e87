import FoundationEssentials

/// How a store's fetches reach the network: the `proxy` key of `[defaults]` or a store.
public enum ProxySetting: Sendable, Equatable {
    /// No `proxy` key: libcurl reads `https_proxy`, `HTTPS_PROXY`, `all_proxy`, `ALL_PROXY` and `no_proxy`.
    case environment
    /// `proxy = ""`: connect directly, whatever the environment says.
    case direct
    /// `proxy = "http://[user:password@]host:port"`: an HTTP proxy reached over plain TCP that
    /// opens a CONNECT tunnel, so TLS still runs end to end with the list server.
    case http(String)

    /// Parses the key's value; the error text never repeats credentials.
    static func parse(_ text: String) -> Result<ProxySetting, ProxyValueError> {
        if text.isEmpty { return .success(.direct) }
        guard let separator = text.scalarRange(of: "://") else {
            return .failure(.init("must be \"\" or an http:// URL with a port, such as \"http://proxy.example:3128\""))
        }
        let scheme = text[..<separator.lowerBound].lowercased()
        guard scheme == "http" else {
            return .failure(.init("only http:// proxies are supported (they tunnel TLS with CONNECT), not \(scheme)://"))
        }
        guard text.unicodeScalars.allSatisfy({ $0.isASCII && $0.value > 0x20 && $0.value != 0x7F }) else {
            return .failure(.init("must not contain spaces, control or non-ASCII characters (percent-encode them)"))
        }
        guard let parts = URLComponents(string: text), let host = parts.host, !host.isEmpty else {
            return .failure(.init("is not a valid URL: write http://[user:password@]host:port"))
        }
        guard let port = parts.port, (1...65_535).contains(port) else {
            // libcurl would silently use port 1080; an explicit port avoids that surprise.
            return .failure(.init("must name the proxy's port (1-65535), such as \"http://proxy.example:3128\""))
        }
        guard parts.path.isEmpty || parts.path == "/", parts.query == nil, parts.fragment == nil else {
            return .failure(.init("must not have a path, query or fragment: write http://[user:password@]host:port"))
        }
        return .success(.http(text))
    }

    /// The proxy as it may appear in logs, status and `check-config`: credentials replaced by `***`.
    public var redacted: String {
        switch self {
        case .environment: return "the environment's proxy settings"
        case .direct: return "none (direct)"
        case .http(let url): return Self.redact(url)
        }
    }

    /// `scheme://user:password@host:port/...` → `scheme://***@host:port/...`; text without
    /// credentials is returned unchanged. Works on any proxy string, also the environment's.
    public static func redact(_ proxy: String) -> String {
        guard let (afterScheme, at) = userinfo(in: proxy) else { return proxy }
        let scalars = proxy.unicodeScalars
        return String(scalars[..<afterScheme]) + "***" + String(scalars[at...])
    }

    /// The credentials in a proxy string (`user:password`), so that text from libcurl can be
    /// scrubbed of them; nil when there are none.
    static func credentials(in proxy: String) -> String? {
        guard let (afterScheme, at) = userinfo(in: proxy), at > afterScheme else { return nil }
        return String(proxy.unicodeScalars[afterScheme..<at])
    }

    /// Where the userinfo starts (after `scheme://`, or at the start) and its `@`, found by Unicode
    /// scalars: a `@` followed by a combining mark is not a Character of its own, but libcurl
    /// still splits there.
    private static func userinfo(in proxy: String) -> (start: String.Index, at: String.Index)? {
        let scalars = proxy.unicodeScalars
        let afterScheme = proxy.scalarRange(of: "://")?.upperBound ?? scalars.startIndex
        let authorityEnd = scalars[afterScheme...].firstIndex(where: { "/?#".unicodeScalars.contains($0) }) ?? scalars.endIndex
        guard let at = scalars[afterScheme..<authorityEnd].lastIndex(of: "@") else { return nil }
        return (afterScheme, at)
    }
}

struct ProxyValueError: Error {
    let problem: String
    init(_ problem: String) { self.problem = problem }
}

/// Interpolating a setting (or a policy or store holding one) into a message must never leak a password.
extension ProxySetting: CustomStringConvertible, CustomDebugStringConvertible {
    public var description: String { redacted }
    public var debugDescription: String { redacted }
}
