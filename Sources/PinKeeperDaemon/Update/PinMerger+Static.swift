import PinKeeper

extension PinMerger {
    /// A static list merged as `merge` does (the same rules, the same failures in the same
    /// order), from entries kept compact (`StaticEntries`): a 100,000-entry list is never held
    /// as `Pin`s before it is verified, and its chunks are let go while the merged pins are made.
    /// With `digest`, also the list's `ListDigest`, over only what its signatures cover: name,
    /// fingerprint and expiry (depth 0, no `domainsConfig`) of the unexpired entries (all
    /// verified, or identical to a verified pin, or the list is refused) and of the expired
    /// entries whose own signature verifies, so that neither the time of the fetch nor an
    /// unsigned entry a CDN slipped in moves it. Made on one core while the other verifies.
    func mergeStatic(
        cached: [Pin], received: consuming StaticEntries, hadDomainsConfig: Bool, now: Int64, digest: Bool = false
    ) throws(UpdateFailure) -> (outcome: Outcome, listDigest: String?) {
        let configured = Set(verifier.keys.map(\.id))
        var merged = cached.filter { !$0.isExpired(at: now) && $0.key.map(configured.contains) == true }
        var known = IdentityTable(capacity: merged.count + received.count)
        for index in merged.indices { _ = known.insert(.cached(index), cached: merged, received: received) }
        var freshFound: [Int] = [], expiredFound: [Int] = []
        for index in 0..<received.count {
            if received.expires(index) < now {
                expiredFound.append(index)
            } else if known.insert(.received(index), cached: merged, received: received) {
                freshFound.append(index)
            }
        }
        known = IdentityTable(capacity: 0)
        let (fresh, expired) = (freshFound, expiredFound)

        for index in fresh where received.with(index, { $0.signature?.count ?? 0 }) == 0 {
            throw received.with(index) { UpdateFailure(.invalidData, "the entry '\($0.nameText)' (expires \($0.expires)) has no signature") }
        }
        // Expired entries are verified only for the digest, which counts those whose own signature verifies.
        let checked = digest ? fresh + expired : fresh
        // Sorting the new entries and the digest need no verification: one core does them meanwhile.
        var side: (sorted: [Int], listDigest: String?) = ([], nil)
        let keys = verifier.keyIndices(
            count: checked.count,
            alongside: { [received] in
                side.sorted = fresh.sorted { a, b in received.with(a) { x in received.with(b) { StaticEntry.publishedOrder(x, $0) } } }
                if digest && expired.isEmpty { side.listDigest = Self.digest(received, counting: Array(0..<received.count)) }
            }
        ) { verifier, i in
            received.with(checked[i]) { entry in
                entry.signature.flatMap { signature in
                    verifier.keyIndex(
                        name: entry.name, fingerprint: entry.fingerprint, expires: entry.expires,
                        signature: String(decoding: signature, as: UTF8.self))
                }
            }
        }
        let sorted = side.sorted
        var listDigest = side.listDigest
        for (position, index) in fresh.enumerated() where keys[position] == nil {
            throw received.with(index) {
                UpdateFailure(
                    .invalidSignature,
                    "the signature of entry '\($0.nameText)' (expires \($0.expires)) does not verify under any configured public key")
            }
        }
        if digest && !expired.isEmpty {
            let verifiedExpired = Set(zip(expired, keys[fresh.count...]).compactMap { $1 == nil ? nil : $0 })
            listDigest = Self.digest(received, counting: (0..<received.count).filter { received.expires($0) >= now || verifiedExpired.contains($0) })
        }

        var unexpected: [String] = []
        if let expectedCommonNames {
            var seen = Set(expectedCommonNames.map { PinName($0) })
            unexpected = fresh.map { received.with($0) { $0.nameText } }.filter { seen.insert(PinName($0)).inserted }.sorted()
        }
        // The merged pins, made in published order; each chunk goes once its last fresh entry is made.
        var keyOf = [Int32](repeating: -1, count: received.count)
        for (position, index) in fresh.enumerated() { keyOf[index] = Int32(keys[position]!) }
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
        if merged.isEmpty {
            merged = added
        } else {
            merged += added
            merged.sort(by: Pin.publishedOrder)
        }
        guard !merged.isEmpty else {
            let why = received.count == 0 ? "the list is empty" : "every entry in the list has expired"
            throw UpdateFailure(.storeEmpty, "\(why) and no cached pin is still valid")
        }
        let outcome = Outcome(
            pins: merged, domainsConfig: nil, added: fresh.count, expiredReceived: expired.count, unexpectedNames: unexpected,
            ignoredUnsignedFields: hadDomainsConfig || received.hadDepth)
        return (outcome, listDigest)
    }

    private static func digest(_ entries: StaticEntries, counting selection: [Int]) -> String {
        ListDigest.of(StaticDigestEntries(entries: entries, selection: selection), domainsConfig: nil)
    }
}

/// A set of pin identities (`Pin.Identity`) that refers to pins where they are, for the
/// de-duplication of a large list: a `Set<Pin.Identity>` of 100,000 entries took about 10 MB.
private struct IdentityTable {
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

    private static func with<R>(_ entry: Entry, _ cached: [Pin], _ received: StaticEntries, _ body: (StaticEntry) -> R) -> R {
        switch entry {
        case .received(let index): return received.with(index, body)
        case .cached(let index):
            let pin = cached[index]
            return withUTF8(pin.name) { name in
                pin.fingerprint.withUnsafeBytes { fingerprint in
                    body(StaticEntry(fingerprint: fingerprint, name: name, signature: nil, expires: pin.expires, depth: pin.depth))
                }
            }
        }
    }
}
