/// Lower-case hex, two digits a byte: key ids, the static body's digest and the list digest.
func lowerHex<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> String {
    let digits = Array("0123456789abcdef".utf8)
    var out: [UInt8] = []
    out.reserveCapacity(bytes.count * 2)
    for byte in bytes { out += [digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]] }
    return String(decoding: out, as: UTF8.self)
}
