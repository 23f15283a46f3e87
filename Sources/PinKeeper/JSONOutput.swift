/// The bytes of a JSON document being written, with the few kinds of value the cache file
/// holds: made straight into one buffer, without a `String` or an array per value, so that a
/// 100,000-entry file is encoded in one pass.
struct JSONOutput {
    var bytes: [UInt8] = []

    mutating func put(_ text: StaticString) {
        bytes.append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    mutating func put(_ text: String) { bytes.append(contentsOf: text.utf8) }

    /// A string value. Names, fingerprints and signatures almost never need escaping: they are
    /// copied as they are.
    mutating func putString(_ value: String) {
        var value = value
        let copied = value.withUTF8 { utf8 in
            guard utf8.allSatisfy({ $0 >= 0x20 && $0 != 0x22 && $0 != 0x5C }) else { return false }
            bytes.append(0x22)
            bytes.append(contentsOf: utf8)
            bytes.append(0x22)
            return true
        }
        if !copied { put(jsonString(value)) }
    }

    /// Digits straight into the buffer.
    mutating func putInteger(_ value: Int64) {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
            var rest = value.magnitude
            var start = 20
            repeat {
                start -= 1
                digits[start] = UInt8(ascii: "0") + UInt8(rest % 10)
                rest /= 10
            } while rest != 0
            if value < 0 { bytes.append(UInt8(ascii: "-")) }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: digits[start...]))
        }
    }
}
