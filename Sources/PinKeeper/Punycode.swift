/// RFC 3492 Punycode, encoding only: what a DNS label holding non-ASCII scalars becomes after
/// `xn--` in a host's one form (`HostName`). The label is encoded as written: no IDNA mapping,
/// no normalisation, so that every reader gets the same A-label without a Unicode database.
enum Punycode {
    private static let base = 36, tMin = 1, tMax = 26, skew = 38, damp = 700
    private static let initialBias = 72, initialN = 0x80

    /// The encoding of `scalars` (without the `xn--` prefix); nil on overflow, which no label of
    /// a real name reaches.
    static func encode(_ scalars: [Unicode.Scalar]) -> String? {
        var output: [UInt8] = scalars.filter(\.isASCII).map { UInt8($0.value) }
        let basicCount = output.count
        if basicCount > 0 { output.append(UInt8(ascii: "-")) }
        var n = initialN, delta = 0, bias = initialBias, handled = basicCount
        let codePoints = scalars.map { Int($0.value) }
        while handled < codePoints.count {
            // The smallest code point not yet handled; every one below it is.
            let next = codePoints.filter { $0 >= n }.min()!
            let (product, overflow) = (next - n).multipliedReportingOverflow(by: handled + 1)
            guard !overflow, delta <= Int(Int32.max) - product else { return nil }
            delta += product
            n = next
            for codePoint in codePoints {
                if codePoint < n {
                    delta += 1
                    guard delta <= Int(Int32.max) else { return nil }
                }
                guard codePoint == n else { continue }
                output.append(contentsOf: digits(of: delta, bias: bias))
                bias = adapt(delta, count: handled + 1, first: handled == basicCount)
                delta = 0
                handled += 1
            }
            delta += 1
            n += 1
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// `delta` as a generalised variable-length integer, least significant digit first.
    private static func digits(of delta: Int, bias: Int) -> [UInt8] {
        var result: [UInt8] = []
        var q = delta
        var k = base
        while true {
            let t = k <= bias ? tMin : k >= bias + tMax ? tMax : k - bias
            if q < t { break }
            result.append(digit(t + (q - t) % (base - t)))
            q = (q - t) / (base - t)
            k += base
        }
        result.append(digit(q))
        return result
    }

    private static func digit(_ value: Int) -> UInt8 {
        value < 26 ? UInt8(ascii: "a") + UInt8(value) : UInt8(ascii: "0") + UInt8(value - 26)
    }

    private static func adapt(_ delta: Int, count: Int, first: Bool) -> Int {
        var delta = first ? delta / damp : delta / 2
        delta += delta / count
        var k = 0
        while delta > ((base - tMin) * tMax) / 2 {
            delta /= base - tMin
            k += base
        }
        return k + (base - tMin + 1) * delta / (delta + skew)
    }
}
