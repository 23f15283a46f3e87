// libFuzzer entry point for pinkeeper's untrusted-input surface. Built by Tests/Fuzz/run.sh together
// with the product sources themselves (not copies): the list parser and cache-file reader of the
// PinKeeper module, and the daemon's envelope checks (ListExchange), signature verification
// (SignatureVerifier/PublicKey over real libcrypto), Retry-After parsing and PinMerger.
//
// Input layout: the first byte picks what is exercised, the rest is the payload.
//   0  list:      payload is a response body → PinList(json:) (compared with the JSONDecoder-based
//                 decoder it replaced), then PinMerger (static mode,
//                 entry signatures verified with key B) and a publish/re-read round trip
//                 through CacheFile.encoded() / CacheFile(json:) that must reproduce the list.
//   1  cache:     payload is a cache file → CacheFile(json:) (compared likewise); if it parses, its encoding must
//                 parse back to the same value.
//   2  envelope:  payload is "STATUS\nCHALLENGE\nSIGNATURE\nRETRY-AFTER\nBODY" → the daemon's
//                 ListExchange.verifiedList (status → signature header → JSON), key B.
//   3  key:       payload is "KEY-BASE64\nSIGNATURE-BASE64\nMESSAGE" → PublicKey(base64:) and a
//                 verification with it (d2i_PUBKEY on arbitrary points, DER signatures).
// Any other selector value wraps around (selector % 4).
import Foundation
import PinKeeper

/// Key B of the test vectors in Tests/Fixtures/vectors (its private key is public: a test key).
private let keyB = try! PublicKey(base64: "BC3kV9OIDnMuVoCdDR9nEA/JidJLTTDLuSA2TSZsGgODSshfbZg31MS90WC/HdbU/A5WL5GmyDkE/iks6INv+XE=")
private let verifierB = SignatureVerifier(keys: [keyB])
/// A fixed "now" (2025-01-01) so expiry decisions do not depend on when the fuzzer runs.
private let fuzzNow: Int64 = 1_735_689_600
private let skipKnown = ProcessInfo.processInfo.environment["FUZZ_SKIP_KNOWN"] == "1"

/// The daemon's envelope with a given challenge, instead of a fresh CSPRNG one.
extension ListExchange {
    init(fuzzStore store: StoreConfig, challenge: String?) {
        self.store = store
        self.challenge = challenge
        self.isConditional = false
        self.request = HTTPRequest(url: store.url)
    }
}

private let challengeStore = StoreConfig(id: "fuzz", url: "https://127.0.0.1/fuzz", publicKeys: [keyB], mode: .challenge)
private let staticStore = StoreConfig(id: "fuzz", url: "https://127.0.0.1/fuzz", publicKeys: [keyB], mode: .static)

private func text(_ data: Data) -> String { String(decoding: data, as: UTF8.self) }

/// A property the product promises, checked on every input; a violation is a finding.
private func require(_ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String) {
    if !condition() {
        FileHandle.standardError.write(Data("FUZZ INVARIANT VIOLATED: \(message())\n".utf8))
        abort()
    }
}

/// What pinkeeper publishes must read back as the same list (docs/cache-format.md: readers parse it).
private func roundTrip(_ list: PinList) {
    let file = CacheFile(
        list: list,
        metadata: .init(
            store: "fuzz", source: "https://127.0.0.1/fuzz",
            updated: fuzzNow, nextUpdate: fuzzNow + 3600))
    let bytes = file.encoded()
    do {
        let back = try CacheFile(json: bytes)
        require(back == file, "published list does not read back equal:\n\(text(bytes))")
        require(back.encoded() == bytes, "encoding is not stable:\n\(text(bytes))")
    } catch {
        require(false, "published list does not parse back (\(error)):\n\(text(bytes))")
    }
}

/// The decoder against the JSONDecoder one it replaced (Tests/PinKeeperTests/ReferencePinListDecoder.swift):
/// never more lenient, the same values, and stricter only in the ways PinListDecoder documents.
private func compareWithReference<Value: Equatable>(
    _ new: Result<Value, PinListError>, _ reference: Result<Value, PinListError>,
    _ input: Data
) {
    switch (new, reference) {
    case (.success(let value), .success(let old)):
        require(value == old, "decoded differently from JSONDecoder:\n\(text(input))")
    case (.success, .failure(let old)):
        require(false, "accepted what JSONDecoder refused (\(old.reason)):\n\(text(input))")
    case (.failure(let error), .success):
        let reason = error.reason
        require(
            reason.hasPrefix("not valid JSON (") || reason.hasSuffix(" appears more than once")
                || reason.hasSuffix(" is not an integer") || reason.hasSuffix(" is not the base64 of a 32-byte SHA-256 digest"),
            "refused what JSONDecoder accepted, for no documented reason (\(reason)):\n\(text(input))")
    case (.failure, .failure):
        break
    }
}

private func fuzzList(_ body: Data) {
    let decoded = Result { () throws(PinListError) in try PinList(json: body) }
    compareWithReference(decoded, Result { () throws(PinListError) in try ReferencePinListDecoder.list(body) }, body)
    guard case .success(let list) = decoded else { return }
    // Keep an iteration cheap: a P-256 verification costs ~0.1 ms.
    let received = PinList(pins: Array(list.pins.prefix(16)), domainsConfig: list.domainsConfig)
    if let outcome = try? PinMerger(mode: .static, verifier: verifierB).merge(cached: [], received: received, now: fuzzNow) {
        require(outcome.pins.allSatisfy { verifierB.verifyEntry($0) }, "merge kept an entry that does not verify")
        roundTrip(PinList(pins: outcome.pins, domainsConfig: outcome.domainsConfig))
    }
    if let outcome = try? PinMerger(mode: .challenge, verifier: verifierB).merge(cached: [], received: list, now: fuzzNow) {
        require(outcome.pins.allSatisfy { !$0.isExpired(at: fuzzNow) }, "merge kept an expired entry")
        roundTrip(PinList(pins: outcome.pins, domainsConfig: outcome.domainsConfig))
    }
    roundTrip(list)
}

private func fuzzCache(_ bytes: Data) {
    let decoded = Result { () throws(PinListError) in try CacheFile(json: bytes) }
    compareWithReference(decoded, Result { () throws(PinListError) in try ReferencePinListDecoder.cacheFile(bytes) }, bytes)
    guard case .success(let file) = decoded else { return }
    let again = file.encoded()
    do {
        let back = try CacheFile(json: again)
        require(back == file, "re-encoded cache file reads back different:\n\(text(again))")
    } catch {
        require(false, "re-encoded cache file does not parse (\(error)):\n\(text(again))")
    }
}

private func fuzzEnvelope(_ payload: Data) {
    let p = FuzzInput.split(payload, parts: 5)
    let status = Int(text(p[0]).prefix(4)) ?? 200
    var retryAfter = text(p[3])
    // Tests/Fuzz/crashers/retry-after-non-ascii: Foundation's DateFormatter trapped on some non-ASCII
    // Retry-After values. To fuzz a tree that still has that bug, FUZZ_SKIP_KNOWN=1 keeps such
    // values out so the rest of the envelope is still explored.
    if skipKnown && !retryAfter.utf8.allSatisfy({ $0 < 0x80 }) { retryAfter = "" }
    var headers: [String: String] = ["retry-after": retryAfter]
    let signature = text(p[2])
    if !signature.isEmpty { headers[ListExchange.signatureHeader] = signature }
    let response = HTTPResponse(status: status, headers: headers, body: p[4])
    let challenge = text(p[1])
    let exchange = ListExchange(
        fuzzStore: challenge.isEmpty ? staticStore : challengeStore,
        challenge: challenge.isEmpty ? nil : challenge)
    do {
        let (list, signedBy) = try exchange.verifiedList(from: response, now: fuzzNow)
        // Reaching here in challenge mode means the signature verified under key B, and says so.
        if !challenge.isEmpty {
            require(
                verifierB.verifyChallengeResponse(challenge: challenge, body: p[4], signatureBase64: signature),
                "envelope accepted a body whose signature does not verify")
            require(signedBy === verifierB.keys.first, "envelope named the wrong verifying key")
        }
        _ = try? PinMerger(mode: exchange.store.mode, verifier: verifierB)
            .merge(cached: [], received: list, responseKey: signedBy, now: fuzzNow)
    } catch {
        if let retry = error.retryAfter { require(retry >= 0, "negative Retry-After \(retry)") }
    }
}

private func fuzzKey(_ payload: Data) {
    let p = FuzzInput.split(payload, parts: 3)
    guard let key = try? PublicKey(base64: text(p[0])) else { return }
    let signature = Data(base64Encoded: text(p[1])).map(Array.init) ?? Array(p[1])
    _ = SignatureVerifier(keys: [key, keyB]).verify(signature: signature, message: p[2])
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTestOneInput(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    guard let start, count > 0 else { return 0 }
    let data = Data(bytes: start, count: count)
    let payload = data.dropFirst()
    switch data[data.startIndex] % 4 {
    case 0: fuzzList(Data(payload))
    case 1: fuzzCache(Data(payload))
    case 2: fuzzEnvelope(Data(payload))
    default: fuzzKey(Data(payload))
    }
    return 0
}
