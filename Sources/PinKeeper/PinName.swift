/// A name as pinkeeper compares names (docs/protocol.md §5): the sequence of its Unicode scalars,
/// with the ASCII letters A–Z folded to a–z and nothing else changed.
///
/// Not Swift's `String ==`, which treats canonically equivalent spellings as equal ("é" and
/// "e" + U+0301): the Python, Java, Go and Node readers compare code points, and every reader
/// must give the same answer. Not full Unicode case folding either, which turns the Kelvin sign
/// U+212A into "k" and makes the dotless "ı" an upper-case "I": DNS folds ASCII letters only.
public struct PinName: Hashable, Sendable, CustomStringConvertible {
    /// UTF-8 is a one-to-one encoding of scalars: equal bytes, equal scalar sequences.
    let folded: [UInt8]

    public init(_ name: String) {
        folded = name.utf8.map(Self.fold)
    }

    /// Whether `name` is this name, without building a second one.
    public func matches(_ name: String) -> Bool {
        folded.elementsEqual(name.utf8.lazy.map(Self.fold))
    }

    /// Whether two names are the same name.
    public static func same(_ a: String, _ b: String) -> Bool {
        a.utf8.lazy.map(fold).elementsEqual(b.utf8.lazy.map(fold))
    }

    public var description: String { String(decoding: folded, as: UTF8.self) }

    /// ASCII upper-case letters only; every byte of a multi-byte scalar is ≥ 0x80 and unchanged.
    static func fold(_ byte: UInt8) -> UInt8 {
        byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte
    }
}

/// The names a TLS peer is judged by (docs/protocol.md §5, "two names"): the host the client
/// connected to and had the platform verify the certificate for, and the leaf certificate's
/// common name when the chain is known. The host always takes part; the common name, which the
/// certificate's holder chose, can add pins to compare but never lift the requirement to match one.
///
/// This is the one place a host is put in its one spelling (`HostName.canonical`): every
/// question of `CacheReader` and `PinValidator` goes through it, so no other spelling of a listed
/// address or name can be judged as an unlisted one.
public struct PeerNames: Sendable {
    /// H: the URL host / SNI name the TLS stack verified, in its one form; empty when the host
    /// handed over was empty or a spelling that is refused, which is always `untrusted`.
    public let host: String
    /// The host as it was handed over, for messages.
    public let givenHost: String
    /// N: the leaf's most specific common name, when a chain is known. Compared as it is.
    public var commonName: String?

    public init(host: String, commonName: String? = nil) {
        givenHost = host
        self.host = HostName.canonical(host) ?? ""
        self.commonName = commonName
    }

    /// Whether the host handed over was refused (empty, or a spelling without one form).
    public var hostRefused: Bool { host.isEmpty }

    /// H, then N unless it is the same name; nothing for a refused host, which decides nothing.
    public var keys: [PinName] {
        guard !hostRefused else { return [] }
        let host = PinName(self.host)
        guard let commonName, !host.matches(commonName) else { return [host] }
        return [host, PinName(commonName)]
    }

    /// A name for messages: the host, and the common name when it differs.
    public var described: String {
        guard !hostRefused else { return "'\(givenHost)' (a host spelling that is refused)" }
        guard let commonName, !PinName.same(host, commonName) else { return "'\(host)'" }
        return "'\(host)' (certificate common name '\(commonName)')"
    }
}
