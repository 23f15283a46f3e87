import Glibc

/// `printf`-style formatting by the C library, for numbers with a fixed count of decimals:
/// the digits and rounding `String(format:)` gave, without Foundation. Swift never
/// calls `setlocale`, so the decimal point is always ".".
public func cFormat(_ format: String, _ arguments: any CVarArg...) -> String {
    let length = withVaList(arguments) { vsnprintf(nil, 0, format, $0) }
    var buffer = [CChar](repeating: 0, count: Int(max(length, 0)) + 1)
    _ = withVaList(arguments) { vsnprintf(&buffer, buffer.count, format, $0) }
    return buffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
}
