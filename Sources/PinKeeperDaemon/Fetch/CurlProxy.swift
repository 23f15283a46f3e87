import CCurl
import FoundationEssentials

/// The libcurl side of `ProxySetting`: which options to set, and how to name the proxy in a
/// failure without its credentials.
extension ProxySetting {
    /// The variables libcurl consults for an https:// URL, in its order of preference.
    static let environmentVariables = ["https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"]

    /// String options. `.environment` sets none, so libcurl reads the environment itself.
    var curlStrings: [(CURLoption, String)] {
        switch self {
        case .environment: return []
        // An empty CURLOPT_PROXY disables proxies, including the environment's.
        case .direct: return [(CURLOPT_PROXY, "")]
        // An empty CURLOPT_NOPROXY keeps the environment's no_proxy from bypassing a proxy the
        // configuration names explicitly.
        case .http(let url): return [(CURLOPT_PROXY, url), (CURLOPT_NOPROXY, "")]
        }
    }

    /// Integer options: a configured proxy always gets a CONNECT tunnel (https:// URLs would
    /// anyway; this keeps plain HTTP from ever being relayed in clear).
    var curlLongs: [(CURLoption, Int)] {
        guard case .http = self else { return [] }
        return [(CURLOPT_PROXYTYPE, Int(CURLPROXY_HTTP.rawValue)), (CURLOPT_HTTPPROXYTUNNEL, 1)]
    }

    /// The proxy a fetch went through, redacted, for failure messages; nil when there was none.
    func describedForFailure(environment: [String: String]) -> String? {
        switch self {
        case .direct: return nil
        case .http(let url): return "proxy \(Self.redact(url))"
        case .environment:
            guard let name = Self.environmentVariables.first(where: { environment[$0]?.isEmpty == false }) else { return nil }
            return "proxy \(Self.redact(environment[name]!)) from $\(name)"
        }
    }

    /// Removes the credentials of every proxy in play from text that libcurl produced.
    func scrub(_ text: String, environment: [String: String]) -> String {
        var proxies = Self.environmentVariables.compactMap { environment[$0] }
        if case .http(let url) = self { proxies.append(url) }
        var result = text
        for secret in proxies.compactMap(Self.credentials(in:)) {
            result = result.replacingEvery(secret, with: "***")
        }
        return result
    }
}
