import PinKeeper

/// For each name, as readers compare names (`PinName`: ASCII letters folded), the index of its
/// latest-expiring pin (the first such when several expire together). For `NextUpdate` and
/// `ExpiringPins`, which run on every update: a dictionary keyed by `PinName` made one array per
/// pin and held one per name, about 7 MB at 100,000 pins; this table holds 4 bytes per slot.
enum LatestPins {
    static func indices(_ pins: [Pin], where counts: (Pin) -> Bool = { _ in true }) -> [Int] {
        var size = 16
        while size < pins.count * 2 { size *= 2 }
        var slots = [Int32](repeating: -1, count: size)  // the index of a name's latest pin so far
        let mask = size - 1
        for (index, pin) in pins.enumerated() where counts(pin) {
            var slot = withUTF8(pin.name) { name in
                var hasher = Hasher()
                for byte in name { hasher.combine(fold(byte)) }
                return hasher.finalize() & mask
            }
            while slots[slot] >= 0 && !sameName(pins[Int(slots[slot])].name, pin.name) { slot = (slot + 1) & mask }
            if slots[slot] < 0 || pins[Int(slots[slot])].expires < pin.expires { slots[slot] = Int32(index) }
        }
        return slots.filter { $0 >= 0 }.map(Int.init)
    }

    private static func sameName(_ a: String, _ b: String) -> Bool {
        withUTF8(a) { x in withUTF8(b) { y in x.count == y.count && zip(x, y).allSatisfy { fold($0) == fold($1) } } }
    }

    private static func fold(_ byte: UInt8) -> UInt8 { byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte }
}
