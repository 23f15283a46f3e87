/// The keys of `[defaults]`, which every store may also set for itself.
enum PolicyKeys {
    static let all =
        [
            "periodic_update_interval", "expiration_update_threshold", "request_timeout",
            "max_response_size", "retry_min", "retry_max", "proxy", "authoritative",
        ] + HookKeys.all

    static func apply(_ table: TOMLTable, to base: UpdatePolicy, file: String, store: String?) throws(ConfigError) -> UpdatePolicy {
        var policy = base
        func read(_ key: NumericKey) throws(ConfigError) -> Int64? { try key.read(table, file: file, store: store) }
        if let v = try read(NumericKeys.periodicUpdateInterval) { policy.periodicUpdateInterval = v }
        if let v = try read(NumericKeys.expirationUpdateThreshold) { policy.expirationUpdateThreshold = v }
        if let v = try read(NumericKeys.requestTimeout) { policy.requestTimeout = v }
        if let v = try read(NumericKeys.retryMin) { policy.retryMin = v }
        if let v = try read(NumericKeys.retryMax) { policy.retryMax = v }
        if let v = try read(NumericKeys.maxResponseSize) { policy.maxResponseSize = Int(v) }
        if let v = try proxy(table, file: file, store: store) { policy.proxy = v }
        if let raw = table["authoritative"] {
            guard let flag = raw.bool else { throw ConfigError(file: file, store: store, key: "authoritative", "must be true or false") }
            policy.authoritative = flag
        }
        try HookKeys.apply(table, to: &policy, file: file, store: store)
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
}
