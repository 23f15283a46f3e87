public import FoundationEssentials
public import PinKeeper

/// Checks Wultra signatures with a store's keys; a signature valid under any key is accepted
/// (so a publisher can rotate keys without a flag day), and the caller learns which key it was
/// (recorded on the pins, so that removing the key removes them).
public struct SignatureVerifier: Sendable {
    public let keys: [PublicKey]

    public init(keys: [PublicKey]) { self.keys = keys }

    /// Challenge mode: the signature covers `challenge text + "&" + body`, exactly as sent and received.
    public func keyVerifyingChallengeResponse(challenge: String, body: Data, signatureBase64: String) -> PublicKey? {
        guard let signature = Data(base64Encoded: signatureBase64) else { return nil }
        var message = Data(challenge.utf8)
        message.append(0x26)
        message.append(body)
        return verifyingKey(signature: Array(signature), message: message)
    }

    public func verifyChallengeResponse(challenge: String, body: Data, signatureBase64: String) -> Bool {
        keyVerifyingChallengeResponse(challenge: challenge, body: body, signatureBase64: signatureBase64) != nil
    }

    /// Static mode: each entry signs `name&base64(fingerprint)&expires`.
    public func keyVerifyingEntry(_ pin: Pin) -> PublicKey? { entryKeyIndex(pin).map { keys[$0] } }

    private func entryKeyIndex(_ pin: Pin) -> Int? {
        guard let text = pin.signature, let signature = Data(base64Encoded: text) else { return nil }
        return keyIndex(signature: Array(signature), message: Data(Self.signedString(for: pin).utf8))
    }

    public func verifyEntry(_ pin: Pin) -> Bool { keyVerifyingEntry(pin) != nil }

    /// `keyVerifyingEntry` for many entries on all cores, in the order given (a list may hold
    /// thousands, and each verification costs tens of microseconds).
    public func keysVerifyingEntries(_ pins: [Pin]) -> [PublicKey?] {
        keyIndices(count: pins.count) { verifier, i in verifier.keyIndex(pins[i]) }.map { $0.map { keys[$0] } }
    }

    /// `count` entries verified on all cores, `verify` answering for entry `i` with the verifier
    /// of its thread: each entry's key as an index into `keys`.
    func keyIndices(count: Int, _ verify: (inout EntryVerifier, Int) -> Int?) -> [Int?] {
        let found = UnsafeMutableBufferPointer<Int>.allocate(capacity: count)
        defer { found.deallocate() }
        found.initialize(repeating: -1)
        let chunk = 64
        nonisolated(unsafe) let results = found  // each iteration writes a disjoint range
        ParallelLoop.run(iterations: (count + chunk - 1) / chunk) { c in
            var verifier = EntryVerifier(keys: keys)  // set up once per chunk, not per entry
            for i in (c * chunk)..<min(count, (c + 1) * chunk) {
                results[i] = verify(&verifier, i) ?? -1
            }
        }
        return found.map { $0 >= 0 ? $0 : nil }
    }

    public static func signedString(for pin: Pin) -> String {
        "\(pin.name)&\(pin.fingerprintBase64)&\(pin.expires)"
    }

    public func verifyingKey(signature: [UInt8], message: Data) -> PublicKey? {
        keyIndex(signature: signature, message: message).map { keys[$0] }
    }

    private func keyIndex(signature: [UInt8], message: Data) -> Int? {
        message.withUnsafeBytes { bytes in keys.firstIndex { $0.isValidSignature(signature, for: bytes) } }
    }

    public func verify(signature: [UInt8], message: Data) -> Bool { verifyingKey(signature: signature, message: message) != nil }
}
