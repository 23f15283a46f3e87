import Foundation
import PinKeeper
@testable import PinKeeperDaemon
import TestSupport

/// The signing keys of the test vectors, and their static list.
extension Vectors {
    static let keyABase64 = "BEG6g28LNWRcmdFzexSNTKPBYZnDtKrCyiExFKbktttfKAF7wG4Cx1Nycr5PwCoICG1dRseLyuDxUilAmppPxAo="

    static func keyBBase64() throws -> String { try text("key-B.public.x963.b64") }
    static func keyA() throws -> PublicKey { try PublicKey(base64: keyABase64) }
    static func keyB() throws -> PublicKey { try PublicKey(base64: keyBBase64()) }

    /// A verifier trusting exactly key B.
    static func verifierB() throws -> SignatureVerifier { SignatureVerifier(keys: [try keyB()]) }

    /// The generated static list: `www.google.com` (expired 2018) and `api.example.com` (valid to 2100).
    static func staticList() throws -> (expired: Pin, valid: Pin) {
        let pins = try list("generated-static-list.json").pins
        guard pins.count == 2, pins[0].name == "www.google.com", pins[1].name == "api.example.com" else {
            throw VectorError("generated-static-list.json does not hold the two documented entries")
        }
        return (pins[0], pins[1])
    }
}

struct VectorError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// Hand-made pins with a well-formed 32-byte fingerprint.
enum Pins {
    static func make(
        _ name: String, _ byte: UInt8 = 0xEE, expires: Int64, depth: Int = 0,
        signature: String? = nil, key: String? = nil
    ) -> Pin {
        Pin(
            name: name, fingerprint: [UInt8](repeating: byte, count: 32), expires: expires, depth: depth,
            signature: signature, key: key)
    }
}

/// A deterministic `RandomSource`: returns `fraction` of the upper bound (0 = never, 1 = always the maximum).
struct FixedRandom: RandomSource {
    var fraction: Double
    func uniform(upTo upper: Int64) -> Int64 { upper <= 0 ? 0 : Int64((Double(upper) * fraction).rounded(.down)) }

    static let zero = FixedRandom(fraction: 0)
    static let max = FixedRandom(fraction: 1)
}
