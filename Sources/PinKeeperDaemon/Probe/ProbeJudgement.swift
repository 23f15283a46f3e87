import PinKeeper

/// The pins' answer for a verified chain a host served: the question a reader asks
/// (`CacheReader.verdict(host:verifiedChain:)`: the probed host name, the leaf's common name,
/// every depth), then how long that answer lasts.
enum ProbeJudgement {
    /// `chain` is the chain OpenSSL verified, leaf first; never what the server merely sent.
    /// `name` is the probed host in its one spelling (`HostName.canonical`).
    static func judge(
        chain: [Certificate], name: String, reader: CacheReader, threshold: Int64,
        now: Int64
    ) -> (ProbeOutcome, String) {
        let found = judgement(chain: chain, name: name, reader: reader, threshold: threshold, now: now)
        return (found.outcome, found.reason)
    }

    /// The outcome, why, and until when the served chain stays pinned (nil: it is not, or the
    /// store does not require pinning for the host): what an `expiring` probe compares with
    /// the store's next update.
    struct Found: Equatable {
        var outcome: ProbeOutcome
        var reason: String
        var trustedUntil: Int64?

        init(outcome: ProbeOutcome, trustedUntil: Int64? = nil, reason: String) {
            self.outcome = outcome
            self.reason = reason
            self.trustedUntil = trustedUntil
        }

        init(outcome: ProbeOutcome, reason: String, trustedUntil: Int64?) {
            self.init(outcome: outcome, trustedUntil: trustedUntil, reason: reason)
        }
    }

    static func judgement(
        chain: [Certificate], name: String, reader: CacheReader, threshold: Int64,
        now: Int64
    ) -> Found {
        let names = PeerNames(host: name, commonName: chain.first?.commonName)
        let keys = names.keys
        let pins = reader.snapshot().validPins(now: now).filter { pin in keys.contains { $0.matches(pin.name) } }
        switch reader.verdict(host: name, verifiedChain: chain, now: now) {
        case .empty:
            return Found(
                outcome: .unpinned,
                reason: "the store has no valid pin for \(names.described): clients enforcing it reject every certificate")
        case .untrusted:
            return untrusted(name: name, names: names, reader: reader, pins: pins.count)
        case .trusted:
            break
        }
        let matching = pins.filter { $0.depth < chain.count && chain[$0.depth].fingerprint == $0.fingerprint }
        // Trusted without a matching pin: the list's domainsConfig does not require pinning.
        guard !matching.isEmpty else {
            return Found(outcome: .pinned, reason: "the store does not require pinning for \(names.described) (domainsConfig)")
        }

        // A pin protects the served chain until it expires or the certificate it names does,
        // whichever comes first; the longest-lasting pin is the one that counts.
        func end(_ pin: Pin) -> Int64 { min(pin.expires, chain[pin.depth].notAfter ?? Int64.max) }
        let best = matching.max { end($0) < end($1) }!
        let trustedUntil = end(best)
        let depth = best.depth == 0 ? "the served certificate" : "the certificate at depth \(best.depth) of the served chain"
        guard trustedUntil.saturatingSubtracting(now) < threshold else {
            return Found(outcome: .pinned, reason: "\(depth) is pinned until \(Timestamp.iso(trustedUntil))", trustedUntil: trustedUntil)
        }
        if best.expires < chain[best.depth].notAfter ?? Int64.max {
            // The certificate outlives its pins: the server may well keep serving it.
            return Found(
                outcome: .expiring, trustedUntil: trustedUntil,
                reason: "the only pins for \(depth) expire \(Timestamp.iso(best.expires)), before the certificate does "
                    + "(\(Timestamp.iso(chain[best.depth].notAfter ?? 0))), and within expiration_update_threshold"
            )
        }
        // The certificate expires first: the host must switch to another one, which must be pinned by then.
        let replaced = pins.contains { pin in !matching.contains(pin) && pin.expires > trustedUntil }
        if replaced {
            return Found(
                outcome: .pinned, reason: "\(depth) expires \(Timestamp.iso(trustedUntil)); a replacement certificate is already pinned",
                trustedUntil: trustedUntil)
        }
        return Found(
            outcome: .expiring, trustedUntil: trustedUntil,
            reason: "\(depth) expires \(Timestamp.iso(trustedUntil)), within expiration_update_threshold, and no "
                + "replacement certificate is pinned for \(names.described)"
        )
    }

    /// Why the reader refuses the served chain, for a host the store has valid pins for.
    private static func untrusted(name: String, names: PeerNames, reader: CacheReader, pins: Int) -> Found {
        if !reader.admits(names) {
            return Found(
                outcome: .unpinned,
                reason: "neither \(name) nor the certificate's common name is among the store's expected_common_names: "
                    + "clients enforcing it reject the host"
            )
        }
        return Found(
            outcome: .unpinned,
            reason: "the served chain matches none of the \(pins) valid pin\(pins == 1 ? "" : "s") for "
                + "\(names.described): clients enforcing the store reject it now"
        )
    }
}
