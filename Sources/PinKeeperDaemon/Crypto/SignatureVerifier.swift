import Foundation
import PinKeeper

/// Checks Wultra signatures with a store's keys; a signature valid under any key is accepted
/// (so a publisher can rotate keys without a flag day).
public struct SignatureVerifier: Sendable {
    public let keys: [PublicKey]

    public init(keys: [PublicKey]) { self.keys = keys }

    /// Challenge mode: the signature covers `challenge text + "&" + body`, exactly as sent and received.
    public func verifyChallengeResponse(challenge: String, body: Data, signatureBase64: String) -> Bool {
        guard let signature = Data(base64Encoded: signatureBase64) else { return false }
        var message = Data(challenge.utf8)
        message.append(0x26)
        message.append(body)
        return verify(signature: Array(signature), message: message)
    }

    /// Static mode: each entry signs `name&base64(fingerprint)&expires`.
    public func verifyEntry(_ pin: Pin) -> Bool {
        guard let text = pin.signature, let signature = Data(base64Encoded: text) else { return false }
        return verify(signature: Array(signature), message: Data(Self.signedString(for: pin).utf8))
    }

    public static func signedString(for pin: Pin) -> String {
        "\(pin.name)&\(pin.fingerprintBase64)&\(pin.expires)"
    }

    public func verify(signature: [UInt8], message: Data) -> Bool {
        message.withUnsafeBytes { bytes in keys.contains { $0.isValidSignature(signature, for: bytes) } }
    }
}
