/// A reader's pins by name (`PinName`), built once per version of the cache file: the cached
/// pins, then the fallback pins, each name's in that order.
///
/// Positions in two flat arrays rather than a dictionary of arrays: building it for 100,000 pins
/// allocates two buffers, not a folded name and an array per pin and per name.
struct PinIndex: Sendable {
    private let cached: [Pin]
    private let fallback: [Pin]
    /// Open addressing, a power of two at most two thirds full: each name's first pin.
    private var slots: [Slot]
    /// Per pin (cached, then fallback): the next pin of the same name, or -1.
    private var next: [Int32]

    init(cached: [Pin], fallback: [Pin]) {
        self.cached = cached
        self.fallback = fallback
        let count = cached.count + fallback.count
        precondition(count < Int(Int32.max), "more pins than an index holds")
        var size = 16
        while size < count + count / 2 { size *= 2 }
        slots = [Slot](repeating: Slot(head: -1, hash: 0), count: size)
        next = [Int32](repeating: -1, count: count)
        // Backwards, each pin put in front of its name's chain: the chains end up in order.
        var previous: (name: String, slot: Int)?
        for position in stride(from: count - 1, through: 0, by: -1) {
            let name = name(at: position)
            let slot: Int
            // A list keeps a name's entries together: the same bytes as the last name, same slot.
            if let previous, NameBytes.equal(previous.name, name) {
                slot = previous.slot
            } else {
                var bytes = name
                let hash = bytes.withUTF8(Self.hash)
                slot = self.slot(hash: hash, matching: { PinName.same($0, name) })
                slots[slot].hash = UInt32(truncatingIfNeeded: hash >> 32)
            }
            next[position] = slots[slot].head
            slots[slot].head = Int32(position)
            previous = (name, slot)
        }
    }

    /// Calls `body` with each pin of `name`, in order.
    func forEachPin(named name: PinName, _ body: (Pin) -> Void) {
        let slot = self.slot(hash: name.folded.withUnsafeBufferPointer(Self.hash), matching: { name.matches($0) })
        var position = slots[slot].head
        while position >= 0 {
            body(pin(at: Int(position)))
            position = next[Int(position)]
        }
    }

    private func pin(at position: Int) -> Pin {
        position < cached.count ? cached[position] : fallback[position - cached.count]
    }

    /// Only the name: copying the whole pin would retain its signature and key too.
    private func name(at position: Int) -> String {
        position < cached.count ? cached[position].name : fallback[position - cached.count].name
    }

    /// The slot of the name with this hash that `matching` accepts, else the empty slot where it would go.
    private func slot(hash: Int, matching: (String) -> Bool) -> Int {
        let tag = UInt32(truncatingIfNeeded: hash >> 32)  // the low bits choose the slot
        var slot = hash & (slots.count - 1)
        while slots[slot].head >= 0 {
            if slots[slot].hash == tag && matching(name(at: Int(slots[slot].head))) { return slot }
            slot = (slot + 1) & (slots.count - 1)
        }
        return slot
    }

    /// A name's first pin (-1: an empty slot) beside 32 bits of its hash: one load per probe.
    private struct Slot {
        var head: Int32
        var hash: UInt32
    }

    // MARK: Names

    /// The hash of a name's folded bytes, eight at a time. Folding twice changes nothing, so a
    /// pin's name and a `PinName`'s folded bytes hash alike exactly when they are the same name.
    private static func hash(_ bytes: UnsafeBufferPointer<UInt8>) -> Int {
        var hasher = Hasher()
        hasher.combine(bytes.count)
        let raw = UnsafeRawBufferPointer(bytes)
        var offset = 0
        while offset + 8 <= raw.count {
            hasher.combine(folded(raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self)))
            offset += 8
        }
        if offset < raw.count {
            var tail: UInt64 = 0
            for (shift, byte) in raw[offset...].enumerated() { tail |= UInt64(byte) << (8 * shift) }
            hasher.combine(folded(tail))
        }
        return hasher.finalize()
    }

    /// `PinName.fold` on eight bytes at once: A–Z (0x41–0x5A) gain 0x20, every other byte stays.
    private static func folded(_ word: UInt64) -> UInt64 {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let low = word & (ones &* 0x7F)  // no byte above 0x7F: the sums below stay inside their byte
        let fromA = low &+ ones &* (0x80 - 0x41), pastZ = low &+ ones &* (0x80 - 0x5B)
        let upper = fromA & ~pastZ & ~word & (ones &* 0x80)
        return word | upper >> 2
    }
}
