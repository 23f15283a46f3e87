import FoundationEssentials
import PinKeeper

/// Turns one `[stores.ID]` table into a `StoreConfig`, checking every key.
struct StoreParser {
    /// The keys only a store sets; it may set every key of `[defaults]` too.
    static let ownKeys = ["url", "public_key", "mode", "expected_common_names", "fallback_file", "ca_file"]
    static let keys = ownKeys + ConfigLoader.defaultsKeys

    let id: String
    let table: TOMLTable
    let file: String
    let defaults: UpdatePolicy
    var probeDefaults = ProbeKeys.Written()

    func parse() throws(ConfigError) -> StoreConfig {
        guard Self.isValidID(id) else {
            throw ConfigError(
                file: file, store: id,
                "invalid store id: use 1-64 characters from A-Z a-z 0-9 . _ -, starting with a letter or digit")
        }
        if let problem = FileClaims.idProblem(id) { throw ConfigError(file: file, store: id, problem) }
        try ConfigLoader.checkKeys(table, allowed: Self.keys, file: file, store: id)
        let policy = try PolicyKeys.apply(table, to: defaults, file: file, store: id)
        let modeText = try ConfigLoader.optionalString(table, "mode", file: file, store: id) ?? "challenge"
        guard let mode = ListMode(rawValue: modeText) else {
            throw error("mode", "must be \"challenge\" or \"static\", not \"\(modeText)\"")
        }
        if mode == .static && policy.authoritative {
            // Anyone who can serve the URL can replay an older static list, which would then remove newer pins.
            let origin = table["authoritative"] == nil ? " (inherited from [defaults]; set authoritative = false here)" : ""
            throw error(
                "authoritative",
                "needs mode = \"challenge\"\(origin): a static list is not signed over a fresh challenge, "
                    + "so a replayed older list would remove newer pins")
        }
        let fallback = try readablePath("fallback_file")
        if let fallback { try checkFallback(fallback) }
        var store = StoreConfig(
            id: id, url: try url(), publicKeys: try publicKeys(), mode: mode,
            expectedCommonNames: try commonNames(), fallbackFile: fallback,
            caFile: try readablePath("ca_file"), policy: policy, definedIn: file)
        store.probe = try ProbeKeys.settings(
            own: ProbeKeys.read(table, file: file, store: id), defaults: probeDefaults,
            file: file, store: id)
        return store
    }

    static func isValidID(_ id: String) -> Bool {
        let bytes = Array(id.utf8)
        func allowed(_ c: UInt8, first: Bool) -> Bool {
            let alnum = (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A)
            return alnum || (!first && (c == 0x2E || c == 0x5F || c == 0x2D))
        }
        guard (1...64).contains(bytes.count) else { return false }
        return bytes.enumerated().allSatisfy { allowed($1, first: $0 == 0) }
    }

    private func error(_ key: String, _ problem: String) -> ConfigError {
        ConfigError(file: file, store: id, key: key, problem)
    }

    private func url() throws(ConfigError) -> String {
        guard let text = try ConfigLoader.optionalString(table, "url", file: file, store: id) else {
            throw error("url", "is required: the https:// address of the store's fingerprint list")
        }
        // Checked before parsing so that no error message echoes the secret. The URL is
        // published in every cache file's `source`, which all local users may read.
        if Self.authority(of: text).contains("@") {
            throw error(
                "url",
                "must not carry credentials (user:password@): the URL is published in the cache file, "
                    + "readable by every local user; use an address that needs no credentials, or an authenticating proxy")
        }
        guard let parts = URLComponents(string: text), parts.scheme?.lowercased() == "https",
            let host = parts.host, !host.isEmpty
        else {
            throw error("url", "must be an https:// URL with a host, not \"\(text)\"")
        }
        return text
    }

    /// What stands between `scheme://` and the path, query or fragment: where userinfo would be.
    /// Unicode scalars, not Characters: libcurl splits the URL by bytes, but a combining mark
    /// after `@` or `/` joins it into one Character with the mark, which a search by Character
    /// would miss (credentials let through, or a path taken for userinfo).
    static func authority(of url: String) -> Substring.UnicodeScalarView {
        guard let start = url.scalarRange(of: "://")?.upperBound else { return Substring().unicodeScalars }
        return url.unicodeScalars[start...].prefix { !"/?#".unicodeScalars.contains($0) }
    }

    private func publicKeys() throws(ConfigError) -> [PublicKey] {
        let texts: [String]
        switch table["public_key"] {
        case nil:
            throw error("public_key", "is required: base64 of the 65-byte uncompressed P-256 point (starts with \"B\")")
        case let value? where value.string != nil:
            texts = [value.string!]
        case let value? where value.array != nil:
            var collected: [String] = []
            for element in value.array! {
                guard let text = element.string else { throw error("public_key", "must be a string or an array of strings") }
                collected.append(text)
            }
            guard !collected.isEmpty else { throw error("public_key", "must list at least one key") }
            texts = collected
        default:
            throw error("public_key", "must be a string or an array of strings")
        }
        var keys: [PublicKey] = []
        for (index, text) in texts.enumerated() {
            do {
                keys.append(try PublicKey(base64: text))
            } catch {
                let which = texts.count > 1 ? " (entry \(index + 1))" : ""
                throw self.error("public_key", "\(error.reason)\(which)")
            }
        }
        return keys
    }

    private func commonNames() throws(ConfigError) -> [String]? {
        guard let value = table["expected_common_names"] else { return nil }
        guard let array = value.array else { throw error("expected_common_names", "must be an array of strings") }
        var names: [String] = []
        for element in array {
            guard let name = element.string, !name.isEmpty else {
                throw error("expected_common_names", "must be an array of non-empty strings")
            }
            names.append(name)
        }
        return names
    }

    private func readablePath(_ key: String) throws(ConfigError) -> String? {
        try ConfigLoader.readablePath(table, key, file: file, store: id)
    }

    private func checkFallback(_ path: String) throws(ConfigError) {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw error("fallback_file", "\(path) cannot be read")
        }
        do {
            _ = try PinList(json: data)
        } catch {
            throw self.error("fallback_file", "\(path) is not a Wultra fingerprint list: \(error.reason)")
        }
    }
}
