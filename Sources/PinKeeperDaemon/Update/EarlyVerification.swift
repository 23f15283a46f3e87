import PinKeeper

/// Verifies a static list's entries on a thread of its own while the rest of the list is still
/// being read, a full chunk at a time (`StaticEntries.fullChunk`), so that the second core does
/// not wait for the reading (about 85 ms of a 100,000-entry list). It only finds each entry's
/// key (`StaticEntries.knownKey`); what the results mean stays `PinMerger.mergeStatic`'s to
/// decide, which verifies whatever is left. Entries the store already trusts (`known`) are
/// skipped, as the merge skips them; a duplicate within the list is verified for nothing.
final class EarlyVerification: @unchecked Sendable {  // the queue and flags under `lock`
    private let keys: [PublicKey]
    private let known: [Pin]
    private let table: IdentityTable
    private let lock = ConditionLock()
    private var queue: [StaticEntries.Chunk] = []
    private var stopping = false
    private var running = true

    /// `known`: the cached pins the merge keeps (`PinMerger.keptPins`).
    init(keys: [PublicKey], known: [Pin]) {
        self.keys = keys
        self.known = known
        var table = IdentityTable(capacity: known.count)
        for index in known.indices { _ = table.insert(.cached(index), cached: known, received: StaticEntries()) }
        self.table = table
        BlockingWork.start(named: "pinkeeper-early") { [self] in run() }
    }

    /// A full chunk to verify; it must not change any more.
    func add(_ chunk: StaticEntries.Chunk) {
        lock.withLock { queue.append(chunk) }
        lock.signal()
    }

    /// Returns once the thread has stopped: at once if it is idle, else after the 64 entries it
    /// is at. Chunks not reached keep no result. Idempotent.
    func stop() {
        lock.withLock {
            stopping = true
            queue = []  // chunks are let go while the merge makes pins of them
            lock.broadcast()
            while running { lock.wait() }
        }
    }

    private func run() {
        var verifier = EntryVerifier(keys: keys)
        while let chunk = next() {
            var keys = [Int32](repeating: -2, count: chunk.count)
            var slot = 0
            while slot < chunk.count && !isStopping() {
                for index in slot..<min(slot + 64, chunk.count) { keys[index] = verify(chunk, index, &verifier) }
                slot += 64
            }
            chunk.keys = keys
        }
        lock.withLock { running = false }
        lock.broadcast()
    }

    private func verify(_ chunk: StaticEntries.Chunk, _ slot: Int, _ verifier: inout EntryVerifier) -> Int32 {
        chunk.with(slot) { entry in
            guard !table.contains(entry, cached: known) else { return -2 }
            let signature = entry.signature.map { String(decoding: $0, as: UTF8.self) }
            guard let signature else { return -1 }
            let key = verifier.keyIndex(name: entry.name, fingerprint: entry.fingerprint, expires: entry.expires, signature: signature)
            return Int32(key ?? -1)
        }
    }

    private func next() -> StaticEntries.Chunk? {
        lock.withLock {
            while queue.isEmpty && !stopping { lock.wait() }
            return stopping ? nil : queue.removeFirst()
        }
    }

    private func isStopping() -> Bool { lock.withLock { stopping } }
}
