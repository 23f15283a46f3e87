import CLibcrypto

/// OpenSSL's error queue for this thread, emptied: one text per entry, oldest first
/// (`error:0A000086:SSL routines::certificate verify failed`). The one drain the library and the
/// daemon share; each caller words its message around the texts.
package enum OpenSSLErrorQueue {
    package static func drain() -> [String] {
        var reasons: [String] = []
        while case let code = ERR_get_error(), code != 0 {
            var buffer = [UInt8](repeating: 0, count: 256)
            buffer.withUnsafeMutableBufferPointer { raw in
                raw.withMemoryRebound(to: CChar.self) { ERR_error_string_n(code, $0.baseAddress, $0.count) }
            }
            reasons.append(String(decoding: buffer.prefix { $0 != 0 }, as: UTF8.self))
        }
        return reasons
    }
}
