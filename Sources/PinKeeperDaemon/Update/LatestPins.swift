import PinKeeper

/// For each name, as readers compare names (`PinName`: ASCII letters folded), the index of its
/// latest-expiring pin (the first such when several expire together). For `NextUpdate` and
/// `ExpiringPins`, which run on every update: a dictionary keyed by `PinName` made one array per
/// pin and held one per name, about 7 MB at 100,000 pins; this table holds 4 bytes per slot.
enum LatestPins {
    static func indices(_ pins: some NamedExpiries, where counts: (Int) -> Bool = { _ in true }) -> [Int] {
        var size = 16
        while size < pins.count * 2 { size *= 2 }
        var slots = [Int32](repeating: -1, count: size)  // the index of a name's latest pin so far
        let mask = size - 1
        for index in 0..<pins.count where counts(index) {
            pins.withName(at: index) { name in
                var hasher = Hasher()
                for byte in name { hasher.combine(fold(byte)) }
                var slot = hasher.finalize() & mask
                while slots[slot] >= 0 && !pins.withName(at: Int(slots[slot]), { sameName($0, name) }) { slot = (slot + 1) & mask }
                if slots[slot] < 0 || pins.expiry(at: Int(slots[slot])) < pins.expiry(at: index) { slots[slot] = Int32(index) }
            }
        }
        return slots.filter { $0 >= 0 }.map(Int.init)
    }

    private static func sameName(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Bool {
        a.count == b.count && zip(a, b).allSatisfy { fold($0) == fold($1) }
    }

    private static func fold(_ byte: UInt8) -> UInt8 { byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte }
}

/// Pins, or entries that stand for them, by name and expiry.
protocol NamedExpiries {
    var count: Int { get }
    func expiry(at index: Int) -> Int64
    func withName<R>(at index: Int, _ body: (UnsafeRawBufferPointer) -> R) -> R
}

extension Array: NamedExpiries where Element == Pin {
    func expiry(at index: Int) -> Int64 { self[index].expires }
    func withName<R>(at index: Int, _ body: (UnsafeRawBufferPointer) -> R) -> R { RawBytes.withUTF8(self[index].name, body) }
}
