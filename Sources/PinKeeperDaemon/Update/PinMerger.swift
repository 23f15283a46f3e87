import Dispatch
import PinKeeper

/// Merges a verified-or-to-be-verified response with the pins a store already trusts
/// (PROTOCOL.md §4.3): expired entries are skipped, known entries are not verified again,
/// one bad entry rejects the whole response, and the result is in published order.
public struct PinMerger: Sendable {
    public var mode: ListMode
    public var verifier: SignatureVerifier
    public var expectedCommonNames: [String]?

    public init(mode: ListMode, verifier: SignatureVerifier, expectedCommonNames: [String]? = nil) {
        self.mode = mode
        self.verifier = verifier
        self.expectedCommonNames = expectedCommonNames
    }

    public struct Outcome: Sendable, Equatable {
        public var pins: [Pin]
        public var domainsConfig: DomainsConfig?
        /// Received pins that were not known before.
        public var added: Int
        /// Received entries skipped because they had already expired.
        public var expiredReceived: Int
        /// Common names outside `expected_common_names` (kept, but worth a warning).
        public var unexpectedNames: [String]
    }

    public func merge(cached: [Pin], received: PinList, now: Int64) throws(UpdateFailure) -> Outcome {
        var merged = cached.filter { !$0.isExpired(at: now) }
        var known = Set(merged.map(\.identity))
        var fresh: [Pin] = []
        var expired = 0
        for var pin in received.pins {
            if pin.isExpired(at: now) { expired += 1; continue }
            guard known.insert(pin.identity).inserted else { continue }
            if mode == .challenge { pin.signature = nil }  // the response signature covered it
            fresh.append(pin)
        }
        if mode == .static { try verifyEntries(fresh) }

        let unexpected = expectedCommonNames.map { names in
            Array(Set(fresh.map(\.name)).subtracting(names)).sorted()
        } ?? []
        merged += fresh
        merged.sort(by: Pin.publishedOrder)
        guard !merged.isEmpty else {
            let why = received.pins.isEmpty ? "the list is empty" : "every entry in the list has expired"
            throw UpdateFailure(.storeEmpty, "\(why) and no cached pin is still valid")
        }
        return Outcome(pins: merged, domainsConfig: received.domainsConfig, added: fresh.count,
                       expiredReceived: expired, unexpectedNames: unexpected)
    }

    /// Every new static entry must carry a valid signature; checked on all cores, then reported
    /// in list order so the first bad entry is the one named.
    private func verifyEntries(_ pins: [Pin]) throws(UpdateFailure) {
        for pin in pins where pin.signature == nil || pin.signature == "" {
            throw UpdateFailure(.invalidData, "the entry '\(pin.name)' (expires \(pin.expires)) has no signature")
        }
        let valid = UnsafeMutableBufferPointer<Bool>.allocate(capacity: pins.count)
        defer { valid.deallocate() }
        valid.initialize(repeating: false)
        let chunk = 64
        let chunks = (pins.count + chunk - 1) / chunk
        let verifier = self.verifier
        nonisolated(unsafe) let results = valid  // each iteration writes a disjoint range
        DispatchQueue.concurrentPerform(iterations: chunks) { c in
            for i in (c * chunk)..<min(pins.count, (c + 1) * chunk) {
                results[i] = verifier.verifyEntry(pins[i])
            }
        }
        if let bad = valid.firstIndex(of: false) {
            throw UpdateFailure(.invalidSignature,
                                "the signature of entry '\(pins[bad].name)' (expires \(pins[bad].expires)) does not verify under any configured public key")
        }
    }
}
