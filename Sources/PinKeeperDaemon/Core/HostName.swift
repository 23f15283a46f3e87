import Glibc

/// What a host name in the configuration or on the command line is.
public enum HostName {
    /// An IPv4 or IPv6 literal, as `inet_pton` reads it: verified against the certificate's IP
    /// addresses, and never sent as SNI.
    public static func isIPAddress(_ text: String) -> Bool {
        var v4 = in_addr(), v6 = in6_addr()
        return inet_pton(AF_INET, text, &v4) == 1 || inet_pton(AF_INET6, text, &v6) == 1
    }
}
