import PinKeeper
/// Integers (decimal, 0x, 0o, 0b) and floats (fraction, exponent, inf, nan).
extension TOMLCursor {
    private static func isDecimal(_ byte: UInt8?) -> Bool { byte.map { $0 >= 0x30 && $0 <= 0x39 } ?? false }

    /// A number starting here (a digit, `+` or `-`, `inf` or `nan`).
    mutating func number() throws(TOMLError) -> TOMLValue {
        let start = offset
        var sign: UInt8?
        if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") {
            sign = current
            offset += 1
        }
        if starts(with: "inf") || starts(with: "nan") {
            let infinity = current == UInt8(ascii: "i")
            offset += 3
            let value = infinity ? Double.infinity : Double.nan
            return .float(sign == UInt8(ascii: "-") ? -value : value)
        }
        if current == UInt8(ascii: "0"), let radix = Self.radix(peek(1)) {
            guard sign == nil else { throw error("hexadecimal, octal and binary integers take no sign", at: start) }
            offset += 2
            return .integer(try radixInteger(radix, start: start))
        }
        guard Self.isDecimal(current) else { throw error("expected a value", at: start) }
        if current == UInt8(ascii: "0"), Self.isDecimal(peek(1)) || peek(1) == UInt8(ascii: "_") {
            throw error("leading zeros are not allowed in a number", at: start)
        }
        var digits: [UInt8] = sign.map { [$0] } ?? []
        try digitRun(into: &digits)
        var isFloat = false
        if current == UInt8(ascii: ".") {
            isFloat = true
            digits.append(UInt8(ascii: "."))
            offset += 1
            guard Self.isDecimal(current) else { throw error("expected a digit after the decimal point") }
            try digitRun(into: &digits)
        }
        if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
            isFloat = true
            digits.append(UInt8(ascii: "e"))
            offset += 1
            if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") {
                digits.append(current!)
                offset += 1
            }
            guard Self.isDecimal(current) else { throw error("expected a digit in the exponent") }
            try digitRun(into: &digits)
        }
        let text = String(decoding: digits, as: UTF8.self)
        if isFloat {
            guard let value = Double(text) else { throw error("not a valid float", at: start) }
            return .float(value)
        }
        guard let value = Int64(text) else {
            throw error("integer \(self.text(from: start)) does not fit in 64 bits (-2^63 to 2^63-1)", at: start)
        }
        return .integer(value)
    }

    private static func radix(_ byte: UInt8?) -> UInt8? {
        switch byte {
        case UInt8(ascii: "x"): return 16
        case UInt8(ascii: "o"): return 8
        case UInt8(ascii: "b"): return 2
        default: return nil
        }
    }

    /// Digits with single underscores between them: `1_000`, never `_1`, `1_` or `1__0`.
    private mutating func digitRun(into digits: inout [UInt8]) throws(TOMLError) {
        while true {
            while Self.isDecimal(current) {
                digits.append(current!)
                offset += 1
            }
            guard current == UInt8(ascii: "_") else { return }
            offset += 1
            guard Self.isDecimal(current) else { throw error("an underscore in a number must stand between two digits") }
        }
    }

    private mutating func radixInteger(_ radix: UInt8, start: Int) throws(TOMLError) -> Int64 {
        var value: Int64 = 0
        var expectDigit = true
        while let byte = current {
            if byte == UInt8(ascii: "_") && !expectDigit {
                expectDigit = true
                offset += 1
                continue
            }
            guard let digit = HexDigit.value(byte), digit < radix else { break }
            let (shifted, overflow) = value.multipliedReportingOverflow(by: Int64(radix))
            let (sum, overflow2) = shifted.addingReportingOverflow(Int64(digit))
            guard !overflow, !overflow2 else {
                throw error("integer does not fit in 64 bits (at most 2^63-1)", at: start)
            }
            value = sum
            expectDigit = false
            offset += 1
        }
        if expectDigit {
            throw error(
                current == UInt8(ascii: "_")
                    ? "an underscore in a number must stand between two digits"
                    : "expected a digit", at: offset)
        }
        return value
    }
}
