import PinKeeper

/// Probes one target: a TLS handshake with the host (on a thread of its own, bounded by the
/// store's `request_timeout`), then the store's published and fallback pins asked about the
/// chain OpenSSL verified.
public struct Prober: Sendable {
    public var cacheDirectory: String
    public var clock: any WallClock

    public init(cacheDirectory: String, clock: any WallClock = SystemClock()) {
        self.cacheDirectory = cacheDirectory
        self.clock = clock
    }

    /// `trust`: the store's trust store (its `probe_ca_file` alone, or the system's), loaded once
    /// for all the targets that share it; nil to load it for this probe.
    public func probe(
        _ target: ProbeTarget, of store: StoreConfig,
        trust: Result<TLSClientContext, TLSConnectError>? = nil
    ) async -> ProbeRecord {
        let address = target.connectTo ?? target.endpoint
        // The host the server must prove and the pins are looked up under, in its one spelling:
        // another spelling of a listed address must never be judged as an unlisted name.
        guard let host = HostName.canonical(target.name) else {
            return ProbeRecord(
                target: target.id, outcome: .error, checked: clock.now(),
                reason: "the probed host '\(target.name)' is a spelling that is refused (zone id, leading zeros, empty label): "
                    + "write it in its one form in the store's probe list")
        }
        let handshake: TLSHandshake
        do {
            let loaded: Result<TLSClientContext, TLSConnectError>
            if let trust { loaded = trust } else { loaded = await Self.trust(caFile: store.probe.caFile) }
            let context = try loaded.get()
            handshake = try await TLSConnect.handshake(
                host: address.host, port: address.port, serverName: host,
                context: context, timeoutSeconds: Int(store.policy.requestTimeout))
        } catch {
            let reason = error.kind == .caFile ? "probe_ca_file: \(error.description)" : error.description
            return ProbeRecord(target: target.id, outcome: .error, checked: clock.now(), reason: reason)
        }
        let now = clock.now()
        guard handshake.verificationFailure == nil else {
            let leaf = handshake.presentedChain.first.flatMap { try? Certificate(der: $0) }
            return ProbeRecord(
                target: target.id, outcome: .error, checked: now,
                reason: "TLS verification for \(host) failed: \(handshake.verificationFailure ?? "")",
                peer: handshake.peer, leafFingerprint: leaf?.fingerprintBase64, leafExpires: leaf?.notAfter)
        }
        var chain: [Certificate] = []
        for (depth, der) in handshake.verifiedChain.enumerated() {
            guard let certificate = try? Certificate(der: der) else {
                return ProbeRecord(
                    target: target.id, outcome: .error, checked: now,
                    reason: "the verified chain's certificate at depth \(depth) cannot be parsed", peer: handshake.peer)
            }
            chain.append(certificate)
        }
        let leaf = chain.first
        let found: ProbeJudgement.Found
        switch await judge(chain, name: host, of: store, now: now) {
        case .success(let judged): found = judged
        case .failure(let error):
            return ProbeRecord(
                target: target.id, outcome: .error, checked: now, reason: "the store's pins cannot be read: \(error)",
                peer: handshake.peer, leafFingerprint: leaf?.fingerprintBase64, leafExpires: leaf?.notAfter)
        }
        var record = ProbeRecord(
            target: target.id, outcome: found.outcome, checked: now, reason: found.reason, peer: handshake.peer,
            leafFingerprint: leaf?.fingerprintBase64, leafExpires: leaf?.notAfter)
        record.trustedUntil = found.trustedUntil
        return record
    }

    /// The store's trust store, read on a thread of its own (`BlockingWork`): it is file work.
    private static func trust(caFile: String?) async -> Result<TLSClientContext, TLSConnectError> {
        await BlockingWork.run { Result { () throws(TLSConnectError) in try TLSClientContext(caFile: caFile) } }
    }

    /// The store's published and fallback pins asked about `chain`. Reading them is file work
    /// (each question looks at the cache file again), so it runs on a thread of its own
    /// (`BlockingWork`): probes stuck on a stalled disk must not hold the cooperative pool, and
    /// with it the scheduling loop and the watchdog pings.
    private func judge(
        _ chain: [Certificate], name: String, of store: StoreConfig, now: Int64
    ) async -> Result<ProbeJudgement.Found, CacheReaderError> {
        let cacheDirectory = self.cacheDirectory
        return await BlockingWork.run {
            Result { () throws(CacheReaderError) in
                let reader = try store.pinReader(cacheDirectory: cacheDirectory)
                return ProbeJudgement.judgement(
                    chain: chain, name: name, reader: reader, threshold: store.policy.expirationUpdateThreshold, now: now)
            }
        }
    }
}
