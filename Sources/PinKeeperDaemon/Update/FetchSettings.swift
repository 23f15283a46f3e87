import PinKeeper

/// The settings that decide where a store's fetch goes and what it accepts, as one digest that
/// the state file keeps for the last fetch (`StoreState.fetchSettings`): `url`, `mode`,
/// `public_key`, `expected_common_names`, `ca_file` (its path and its content), `proxy`,
/// `request_timeout` and `max_response_size` (what `HTTPRequest` carries and what verifies the
/// response). A store whose settings changed while the daemon was stopped is fetched at start,
/// as a reload that changed them would fetch it, instead of waiting for its next scheduled update.
/// `authoritative` has a rule of its own (`StoreState.authoritative`); the hook, probes and
/// `fallback_file` change no fetch. The proxy counts without its credentials, which the state
/// file must not hold in any form, not even hashed (a weak password would be found by trying).
enum FetchSettings {
    static func digest(of store: StoreConfig) -> String {
        var text = ""
        func add(_ field: String) { text += "\(field.utf8.count):\(field);" }  // length first: no two lists read alike
        for field in [store.url, store.mode.rawValue, "\(store.publicKeys.count)"] + store.publicKeys.map(\.base64) { add(field) }
        if let names = store.expectedCommonNames {
            add("names \(names.count)")
            names.forEach(add)
        } else {
            add("any name")
        }
        add(store.caFile.map { "ca_file \($0)" } ?? "system trust")
        // Its content too: new certificates at the same path count as a change.
        if let caFile = store.caFile { add(FileContentDigest.sha256(ofFile: caFile).map(lowerHex) ?? "unreadable") }
        // Where the fetch goes; the proxy's password changes neither that nor what is accepted.
        add("proxy \(store.policy.proxy.redacted)")
        add("\(store.policy.requestTimeout) \(store.policy.maxResponseSize)")
        return lowerHex(SHA256.digest(Array(text.utf8)))
    }

    /// Why the store is due at start although its schedule says later: the settings its last
    /// fetch used differ from the configured ones. Nil when they are the same, or unknown: a state
    /// file written before pinkeeper recorded them (or none at all, beside a seeded cache file)
    /// counts as unchanged. Counting it as changed would fetch every store of every host at the
    /// first start after an upgrade, a fleet upgraded together at once; the next fetch records the
    /// digest, and from then on a change counts. A setting changed together with the upgrade waits
    /// for the next scheduled update, as before (SIGUSR1 or `pinkeeper update --force` fetch now).
    /// A hostile value can only make the store due early, never later than its schedule.
    static func changeSinceLastFetch(_ store: StoreConfig, recorded: String?) -> String? {
        guard let recorded, recorded != digest(of: store) else { return nil }
        return changeNotice
    }

    /// What the log says of a store made due by a change of its fetch settings.
    static let changeNotice = "the store's fetch settings changed since its last update; updating it now"
}
