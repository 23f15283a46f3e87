import Foundation
import PinKeeper

/// Small builders for hand-written lists and pins.
enum Sample {
    static let now: Int64 = 1_700_000_000

    /// 32 bytes of `byte`, i.e. a well-formed SHA-256 digest.
    static func digest(_ byte: UInt8) -> [UInt8] { [UInt8](repeating: byte, count: 32) }

    static func pin(
        _ name: String, _ byte: UInt8, expires: Int64 = now + 86_400, depth: Int = 0,
        signature: String? = nil
    ) -> Pin {
        Pin(name: name, fingerprint: digest(byte), expires: expires, depth: depth, signature: signature)
    }

    /// `{"fingerprints":[<entries>]}` plus any extra top-level members.
    static func document(_ entries: [String], extra: String = "") -> Data {
        Data("{\"fingerprints\":[\(entries.joined(separator: ","))]\(extra)}".utf8)
    }

    /// One entry; each argument is raw JSON so tests can put any type in any field.
    static func entry(
        name: String = "\"api.example.com\"",
        fingerprint: String = "\"AQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQE=\"",
        expires: String = "4102444800", extra: String = ""
    ) -> String {
        "{\"name\":\(name),\"fingerprint\":\(fingerprint),\"expires\":\(expires)\(extra)}"
    }

    /// The reason `PinList` gives for rejecting `data`, or nil when it parses.
    static func rejection(_ data: Data) -> String? {
        do {
            _ = try PinList(json: data)
            return nil
        } catch {
            return error.reason
        }
    }
}
