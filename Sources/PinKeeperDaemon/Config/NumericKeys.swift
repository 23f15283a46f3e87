/// One number of the configuration: how it is written and the range `check-config` accepts.
/// Every failure (wrong type, malformed, out of range) gets the same message, which states the
/// range: the operator learns the bounds from the first mistake.
struct NumericKey: Sendable {
    enum Kind: Sendable {
        /// Integer seconds or a string with a unit (`Units.seconds`).
        case duration
        /// Integer bytes or a string with a unit (`Units.bytes`).
        case size
        /// A plain TOML integer.
        case integer
    }

    let name: String
    let kind: Kind
    let range: ClosedRange<Int64>
    /// What follows the range in the message: examples of the forms, or what the key means.
    let hint: String

    var problem: String {
        switch kind {
        case .duration:
            "must be a duration from \(Units.written(seconds: range.lowerBound)) to \(Units.written(seconds: range.upperBound))\(hint)"
        case .size:
            "must be a size from \(Units.written(bytes: range.lowerBound)) to \(Units.written(bytes: range.upperBound))\(hint)"
        case .integer:
            "must be an integer from \(range.lowerBound) to \(range.upperBound)\(hint)"
        }
    }

    /// The key's value in `table`, nil when absent.
    func read(_ table: TOMLTable, file: String, store: String?) throws(ConfigError) -> Int64? {
        guard let raw = table[name] else { return nil }
        let number: Int64?
        switch (raw, kind) {
        case (.integer(let value), _): number = value
        case (.string(let text), .duration): number = Units.seconds(text)
        case (.string(let text), .size): number = Units.bytes(text)
        default: number = nil
        }
        guard let number, range.contains(number) else { throw ConfigError(file: file, store: store, key: name, problem) }
        return number
    }
}

/// Every numeric key, with its bounds. The upper bounds lie far beyond any real setting, so
/// that no operator meets them, and keep every sum and product the daemon makes from them
/// (`now + interval`, `retry_min` doubled up to `retry_max`, seconds × 1000) far from overflow.
enum NumericKeys {
    static let year: Int64 = 365 * 86_400
    static let durationForms = ", such as \"90s\", \"15m\", \"36h\", \"7d\", \"2w\" or integer seconds"

    /// Certificates live 398 days at most: a list fetched less often than yearly is never current.
    static let periodicUpdateInterval = NumericKey(
        name: "periodic_update_interval", kind: .duration, range: 1...year,
        hint: durationForms)
    /// 0 turns the early fetch off; beyond a certificate's life it would always be on.
    static let expirationUpdateThreshold = NumericKey(
        name: "expiration_update_threshold", kind: .duration, range: 0...year,
        hint: durationForms)
    /// Lists are kilobytes; a transfer slower than 64 bytes/s is cut after 10 s anyway, and a
    /// longer limit would hold up the whole pass.
    static let requestTimeout = NumericKey(name: "request_timeout", kind: .duration, range: 1...3_600, hint: durationForms)
    /// A response is held in memory and parsed whole; real lists are kilobytes. The cache file a
    /// list becomes must stay under the 64 MiB that readers (and the daemon) accept.
    static let maxResponseSize = NumericKey(
        name: "max_response_size", kind: .size, range: 1...(32 << 20),
        hint: ", such as \"512KiB\", \"1MiB\" or integer bytes")
    static let retryMin = NumericKey(name: "retry_min", kind: .duration, range: 1...year, hint: durationForms)
    static let retryMax = NumericKey(name: "retry_max", kind: .duration, range: 1...year, hint: durationForms)
    /// A hook that needs longer should start its work in the background (or be a systemd unit).
    static let hookTimeout = NumericKey(
        name: "hook_timeout", kind: .duration, range: 1...600,
        hint: ", such as \"30s\" or \"2m\"")
    /// A probe is a full TLS handshake: more often than every 10 s would only load the servers.
    static let probeInterval = NumericKey(
        name: "probe_interval", kind: .duration, range: ProbeKeys.shortestInterval...year,
        hint: durationForms)
    /// A fetch a probe asks for: more often than every 10 s would only load the pinning service,
    /// and a host unpinned for a day must not wait longer than that for its next try.
    static let minProbeRefresh = NumericKey(
        name: "min_probe_refresh", kind: .duration, range: ProbeKeys.shortestInterval...86_400,
        hint: durationForms)
    static let concurrency = NumericKey(
        name: "concurrency", kind: .integer,
        range: Int64(Configuration.concurrencyRange.lowerBound)...Int64(Configuration.concurrencyRange.upperBound),
        hint: ": how many stores are fetched at once")

    static let all = [
        periodicUpdateInterval, expirationUpdateThreshold, requestTimeout, maxResponseSize, retryMin, retryMax,
        hookTimeout, probeInterval, minProbeRefresh, concurrency,
    ]
}
