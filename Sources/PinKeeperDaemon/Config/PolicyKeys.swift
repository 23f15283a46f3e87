
/// The keys of `[defaults]`, which every store may also set for itself.
enum PolicyKeys {
    static let all = ["periodic_update_interval", "expiration_update_threshold", "request_timeout",
                      "max_response_size", "retry_min", "retry_max", "proxy"] + HookKeys.all

    static func apply(_ table: TOMLTable, to base: UpdatePolicy, file: String, store: String?) throws(ConfigError) -> UpdatePolicy {
        var policy = base
        func duration(_ key: String) throws(ConfigError) -> Int64? {
            try Self.duration(table, key, file: file, store: store)
        }
        if let v = try duration("periodic_update_interval") { policy.periodicUpdateInterval = v }
        if let v = try duration("expiration_update_threshold") { policy.expirationUpdateThreshold = v }
        if let v = try duration("request_timeout") { policy.requestTimeout = v }
        if let v = try duration("retry_min") { policy.retryMin = v }
        if let v = try duration("retry_max") { policy.retryMax = v }
        if let v = try value(table, "max_response_size", file: file, store: store, parse: Units.bytes,
                             expected: "a size such as \"512KiB\", \"1MiB\" or integer bytes") {
            policy.maxResponseSize = Int(v)
        }
        if let v = try proxy(table, file: file, store: store) { policy.proxy = v }
        try HookKeys.apply(table, to: &policy, file: file, store: store)
        for (key, seconds) in [("periodic_update_interval", policy.periodicUpdateInterval),
                               ("request_timeout", policy.requestTimeout), ("retry_min", policy.retryMin)]
        where seconds <= 0 {
            throw ConfigError(file: file, store: store, key: key, "must be greater than zero")
        }
        // Ten years: far beyond any sensible schedule, and far from Int64 overflow in date arithmetic.
        let longest: Int64 = 10 * 365 * 86_400
        for (key, seconds) in [("periodic_update_interval", policy.periodicUpdateInterval),
                               ("expiration_update_threshold", policy.expirationUpdateThreshold),
                               ("request_timeout", policy.requestTimeout), ("retry_min", policy.retryMin),
                               ("retry_max", policy.retryMax)]
        where seconds > longest {
            throw ConfigError(file: file, store: store, key: key, "must be at most 10 years")
        }
        if policy.maxResponseSize <= 0 {
            throw ConfigError(file: file, store: store, key: "max_response_size", "must be greater than zero")
        }
        if policy.retryMax < policy.retryMin {
            throw ConfigError(file: file, store: store, key: "retry_max", "must not be shorter than retry_min")
        }
        return policy
    }

    private static func proxy(_ table: TOMLTable, file: String, store: String?) throws(ConfigError) -> ProxySetting? {
        guard let raw = table["proxy"] else { return nil }
        guard let text = raw.string else { throw ConfigError(file: file, store: store, key: "proxy", "must be a string") }
        switch ProxySetting.parse(text) {
        case .success(let setting): return setting
        case .failure(let error): throw ConfigError(file: file, store: store, key: "proxy", error.problem)
        }
    }

    /// A duration key (integer seconds or a string with a unit), nil when absent; every duration
    /// key of the configuration is read here so that all accept the same forms.
    static func duration(_ table: TOMLTable, _ key: String, file: String, store: String?) throws(ConfigError) -> Int64? {
        try value(table, key, file: file, store: store, parse: Units.seconds,
                  expected: "a duration such as \"90s\", \"15m\", \"36h\", \"7d\", \"2w\" or integer seconds")
    }

    private static func value(_ table: TOMLTable, _ key: String, file: String, store: String?,
                              parse: (String) -> Int64?, expected: String) throws(ConfigError) -> Int64? {
        guard let raw = table[key] else { return nil }
        if let number = raw.int {
            guard number >= 0 else { throw ConfigError(file: file, store: store, key: key, "must not be negative") }
            return Int64(number)
        }
        if let text = raw.string, let parsed = parse(text) { return parsed }
        throw ConfigError(file: file, store: store, key: key, "must be \(expected)")
    }
}
