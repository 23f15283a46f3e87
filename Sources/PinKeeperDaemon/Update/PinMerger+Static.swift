import PinKeeper

extension PinMerger {
    /// A static list merged as `merge` does (the same rules, the same failures in the same
    /// order), from entries kept compact (`StaticEntries`): a 100,000-entry list is never held
    /// as `Pin`s before it is verified, and its chunks are let go while the merged pins are made.
    ///
    /// With `digest`, also the list's `ListDigest`, over only what its signatures cover: name,
    /// fingerprint and expiry (depth 0, no `domainsConfig`) of the unexpired entries (all
    /// verified, or identical to a verified pin, or the list is refused) and of the expired
    /// entries whose own signature verifies, so that neither the time of the fetch nor an
    /// unsigned entry a CDN slipped in moves it.
    ///
    /// `whileVerifying`: given what the merge will give if every new entry verifies under the
    /// first configured key (`StaticPreview`), while they are being verified. Its answer comes
    /// back in `early` only if that is what happened (so work done on the preview, such as
    /// writing the file, is work done on the outcome); otherwise it is dropped.
    ///
    /// The sort of the new entries, the digest and `whileVerifying` need no verification: they
    /// run on a thread of their own beside the verifying ones, so that no core waits.
    /// `verifiedWhileReading`: what verified the entries as they were read; stopped here, and
    /// only what it did not reach is verified again.
    func mergeStatic<Early: Sendable>(
        cached: [Pin], received: consuming StaticEntries, hadDomainsConfig: Bool, now: Int64, digest: Bool = false,
        verifiedWhileReading early: EarlyVerification? = nil, whileVerifying: (@Sendable (StaticPreview) -> Early)? = nil
    ) throws(UpdateFailure) -> (outcome: Outcome, listDigest: String?, early: Early?) {
        defer { early?.stop() }
        let kept = keptPins(cached, now: now)
        let (fresh, expired) = Self.partition(received, kept: kept, now: now)
        early?.stop()
        for index in fresh where received.with(index, { $0.signature?.count ?? 0 }) == 0 {
            throw received.with(index) {
                UpdateFailure(.invalidData, "the entry '\($0.nameText)' (expires \($0.expires)) has no signature")
            }
        }
        let side = SideWork<Early>()
        let firstKey = verifier.keys.first?.id
        BlockingWork.start(named: "pinkeeper-merge") { [received, kept] in
            let sorted = fresh.sorted { a, b in received.with(a) { x in received.with(b) { StaticEntry.publishedOrder(x, $0) } } }
            let listDigest = digest && expired.isEmpty ? Self.digest(received, counting: Array(0..<received.count)) : nil
            var early: Early?
            if let whileVerifying, let firstKey, !sorted.isEmpty {
                early = whileVerifying(StaticPreview(kept: kept, received: received, fresh: sorted, key: firstKey))
            }
            side.finish(sorted: sorted, listDigest: listDigest, early: early)
        }
        // Expired entries are verified only for the digest, which counts those whose own signature verifies.
        let keys = verifiedKeys(digest ? fresh + expired : fresh, in: received)
        let (sorted, sideDigest, preview) = side.wait()
        for (position, index) in fresh.enumerated() where keys[position] < 0 {
            throw received.with(index) {
                UpdateFailure(
                    .invalidSignature,
                    "the signature of entry '\($0.nameText)' (expires \($0.expires)) does not verify under any configured public key")
            }
        }
        var listDigest = sideDigest
        if digest && !expired.isEmpty {
            let verifiedExpired = Set(zip(expired, keys[fresh.count...]).compactMap { $1 < 0 ? nil : $0 })
            listDigest = Self.digest(
                received, counting: (0..<received.count).filter { received.expires($0) >= now || verifiedExpired.contains($0) })
        }
        // Named before the pins are made: making them lets the chunks, and the names in them, go.
        let unexpected = unexpectedNames(fresh.map { received.with($0) { $0.nameText } })
        let added = madePins(&received, fresh: fresh, sorted: sorted, keys: keys)
        let merged = kept.isEmpty ? added : (kept + added).sorted(by: Pin.publishedOrder)
        guard !merged.isEmpty else {
            let why = received.count == 0 ? "the list is empty" : "every entry in the list has expired"
            throw UpdateFailure(.storeEmpty, "\(why) and no cached pin is still valid")
        }
        let outcome = Outcome(
            pins: merged, domainsConfig: nil, added: fresh.count, expiredReceived: expired.count,
            unexpectedNames: unexpected,
            ignoredUnsignedFields: hadDomainsConfig || received.hadDepth)
        let previewHeld = fresh.indices.allSatisfy { keys[$0] == 0 }
        return (outcome, listDigest, previewHeld ? preview : nil)
    }

    /// The received entries that are new (not expired, not already kept or listed before) and
    /// those that have expired, by index.
    private static func partition(_ received: StaticEntries, kept: [Pin], now: Int64) -> (fresh: [Int], expired: [Int]) {
        var known = IdentityTable(capacity: kept.count + received.count)
        for index in kept.indices { _ = known.insert(.cached(index), cached: kept, received: received) }
        var fresh: [Int] = [], expired: [Int] = []
        for index in 0..<received.count {
            if received.expires(index) < now {
                expired.append(index)
            } else if known.insert(.received(index), cached: kept, received: received) {
                fresh.append(index)
            }
        }
        return (fresh, expired)
    }

    /// For each entry, the index of the configured key its signature verifies under (known from
    /// the early verification, or verified now on every core), or -1.
    private func verifiedKeys(_ checked: [Int], in received: StaticEntries) -> [Int] {
        var keys = checked.map { received.knownKey($0) }
        let unknown = checked.indices.filter { keys[$0] == nil }
        let found = verifier.keyIndices(count: unknown.count) { verifier, i in
            received.with(checked[unknown[i]]) { entry in
                entry.signature.flatMap { signature in
                    verifier.keyIndex(
                        name: entry.name, fingerprint: entry.fingerprint, expires: entry.expires,
                        signature: String(decoding: signature, as: UTF8.self))
                }
            }
        }
        for (position, key) in zip(unknown, found) { keys[position] = key ?? -1 }
        return keys.map { $0 ?? -1 }
    }

    /// The new pins, made in published order; each chunk goes once its last new entry is made.
    private func madePins(_ received: inout StaticEntries, fresh: [Int], sorted: [Int], keys: [Int]) -> [Pin] {
        var keyOf = [Int32](repeating: -1, count: received.count)
        for (position, index) in fresh.enumerated() { keyOf[index] = Int32(keys[position]) }
        var left = [Int](repeating: 0, count: (received.count + StaticEntries.chunkSize - 1) / StaticEntries.chunkSize)
        for index in fresh { left[index / StaticEntries.chunkSize] += 1 }
        var added: [Pin] = []
        added.reserveCapacity(sorted.count)
        var name: String?
        for index in sorted {
            let pin = received.pin(index, key: verifier.keys[Int(keyOf[index])].id, reusing: name)
            name = pin.name
            added.append(pin)
            let chunk = index / StaticEntries.chunkSize
            left[chunk] -= 1
            if left[chunk] == 0 { received.release(chunk: chunk) }
        }
        return added
    }

    /// The new entries' names outside `expected_common_names`, once each, sorted.
    private func unexpectedNames(_ names: [String]) -> [String] {
        guard let expectedCommonNames else { return [] }
        var seen = Set(expectedCommonNames.map { PinName($0) })
        return names.filter { seen.insert(PinName($0)).inserted }.sorted()
    }

    /// What verifies a static list's entries while it is read: under this merger's keys (its
    /// answers are indices into them), skipping the pins the merge keeps.
    func earlyVerification(cached: [Pin], now: Int64) -> EarlyVerification {
        EarlyVerification(keys: verifier.keys, known: keptPins(cached, now: now))
    }

    /// The valid cached pins a merge keeps (their key is still configured), in published order.
    func keptPins(_ cached: [Pin], now: Int64) -> [Pin] {
        let configured = Set(verifier.keys.map(\.id))
        // Published files are in this order already: the sort then costs one pass.
        return cached.filter { !$0.isExpired(at: now) && $0.key.map(configured.contains) == true }.sorted(by: Pin.publishedOrder)
    }

    /// `mergeStatic` with nothing to do while verifying.
    func mergeStatic(
        cached: [Pin], received: consuming StaticEntries, hadDomainsConfig: Bool, now: Int64, digest: Bool = false
    ) throws(UpdateFailure) -> (outcome: Outcome, listDigest: String?) {
        let nothing: (@Sendable (StaticPreview) -> Bool)? = nil
        let merged = try mergeStatic(
            cached: cached, received: consume received, hadDomainsConfig: hadDomainsConfig, now: now, digest: digest,
            whileVerifying: nothing)
        return (merged.outcome, merged.listDigest)
    }

    private static func digest(_ entries: StaticEntries, counting selection: [Int]) -> String {
        ListDigest.of(StaticDigestEntries(entries: entries, selection: selection), domainsConfig: nil)
    }

    /// What `mergeStatic` publishes if every new entry verifies under the first configured key:
    /// the cached pins it keeps and the new entries, tagged with that key.
    struct StaticPreview: NamedExpiries, Sendable {
        /// In published order, both.
        fileprivate let kept: [Pin]
        fileprivate let received: StaticEntries
        fileprivate let fresh: [Int]
        fileprivate let key: String

        var count: Int { kept.count + fresh.count }

        func expiry(at index: Int) -> Int64 {
            index < kept.count ? kept[index].expires : received.expires(fresh[index - kept.count])
        }

        func withName<R>(at index: Int, _ body: (UnsafeRawBufferPointer) -> R) -> R {
            index < kept.count ? RawBytes.withUTF8(kept[index].name, body) : received.with(fresh[index - kept.count]) { body($0.name) }
        }

        /// The merged pins in published order, each made when it is reached.
        var pins: some Sequence<Pin> {
            AnySequence { () -> AnyIterator<Pin> in
                var (k, f) = (0, 0)
                var name: String?
                return AnyIterator { () -> Pin? in
                    let takeKept: Bool
                    if k == kept.count {
                        takeKept = false
                    } else if f == fresh.count {
                        takeKept = true
                    } else {
                        takeKept = IdentityTable.with(.cached(k), kept, received) { a in
                            received.with(fresh[f]) { StaticEntry.publishedOrder(a, $0) }
                        }
                    }
                    if takeKept {
                        k += 1
                        return kept[k - 1]
                    }
                    guard f < fresh.count else { return nil }
                    let pin = received.pin(fresh[f], key: key, reusing: name)
                    (f, name) = (f + 1, pin.name)
                    return pin
                }
            }
        }
    }
}

/// The results of the work done beside the verification, handed over once.
private final class SideWork<Early>: @unchecked Sendable {  // every field under `lock`
    private let lock = ConditionLock()
    private var result: (sorted: [Int], listDigest: String?, early: Early?)?

    func finish(sorted: [Int], listDigest: String?, early: Early?) {
        lock.withLock { result = (sorted, listDigest, early) }
        lock.signal()
    }

    func wait() -> (sorted: [Int], listDigest: String?, early: Early?) {
        lock.withLock {
            while result == nil { lock.wait() }
            return result!
        }
    }
}

/// A set of pin identities (`Pin.Identity`) that refers to pins where they are, for the
/// de-duplication of a large list: a `Set<Pin.Identity>` of 100,000 entries took about 10 MB.
struct IdentityTable {
    enum Entry {
        case cached(Int)
        case received(Int)
    }

    /// Open addressing: -1 free, n ≥ 0 received entry n, n ≤ -2 cached pin -n - 2.
    private var slots: [Int32]

    init(capacity: Int) {
        var size = 16
        while size < capacity * 2 { size *= 2 }
        slots = [Int32](repeating: -1, count: capacity == 0 ? 0 : size)
    }

    /// Whether `entry` is among the cached pins of a table that holds only those.
    func contains(_ entry: StaticEntry, cached: [Pin]) -> Bool {
        guard !slots.isEmpty else { return false }
        var hasher = Hasher()
        entry.hash(into: &hasher)
        let mask = slots.count - 1
        var slot = hasher.finalize() & mask
        while slots[slot] != -1 {
            let pin = cached[-Int(slots[slot]) - 2]
            let same = RawBytes.withUTF8(pin.name) { name in
                pin.digest.withUnsafeBytes {
                    entry.sameIdentity(as: StaticEntry(fingerprint: $0, name: name, expires: pin.expires, depth: pin.depth))
                }
            }
            if same { return true }
            slot = (slot + 1) & mask
        }
        return false
    }

    /// Whether `entry` was not there yet (it is now).
    mutating func insert(_ entry: Entry, cached: [Pin], received: StaticEntries) -> Bool {
        Self.with(entry, cached, received) { new in
            var hasher = Hasher()
            new.hash(into: &hasher)
            let mask = slots.count - 1
            var slot = hasher.finalize() & mask
            while slots[slot] != -1 {
                let code = Int(slots[slot])
                let known: Entry = code >= 0 ? .received(code) : .cached(-code - 2)
                if Self.with(known, cached, received, { $0.sameIdentity(as: new) }) { return false }
                slot = (slot + 1) & mask
            }
            switch entry {
            case .received(let index): slots[slot] = Int32(index)
            case .cached(let index): slots[slot] = Int32(-index - 2)
            }
            return true
        }
    }

    static func with<R>(_ entry: Entry, _ cached: [Pin], _ received: StaticEntries, _ body: (StaticEntry) -> R) -> R {
        switch entry {
        case .received(let index): return received.with(index, body)
        case .cached(let index):
            let pin = cached[index]
            return RawBytes.withUTF8(pin.name) { name in
                pin.digest.withUnsafeBytes { fingerprint in
                    body(StaticEntry(fingerprint: fingerprint, name: name, signature: nil, expires: pin.expires, depth: pin.depth))
                }
            }
        }
    }
}
