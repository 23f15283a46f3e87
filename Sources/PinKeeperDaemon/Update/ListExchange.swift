import FoundationEssentials
import PinKeeper

/// The request for one store and the checks its response must pass before the body is
/// trusted: HTTP status, then (challenge mode) the response signature, then the JSON.
struct ListExchange {
    static let signatureHeader = "x-cert-pinning-signature"
    static let challengeHeader = "X-Cert-Pinning-Challenge"

    let store: StoreConfig
    let request: HTTPRequest
    let challenge: String?
    let isConditional: Bool

    init(store: StoreConfig, previous: CacheFile?, memory: StoreState) throws(UpdateFailure) {
        self.store = store
        var headers: [String] = []
        var challenge: String?
        var conditional = false
        switch store.mode {
        case .challenge:
            guard let bytes = SecureRandom.bytes(16) else {
                throw UpdateFailure(.networkError, "the system random generator failed; cannot make a challenge")
            }
            challenge = Data(bytes).base64EncodedString()
            headers.append("\(Self.challengeHeader): \(challenge!)")
        case .static:
            // Conditional only when there is something valid to fall back on if the server says 304,
            // a digest of the list it stands for (a state file of an older version has none), and
            // that list came from this URL: another server's 304 must not republish the old list.
            // A validator that is no valid header value (an older or edited state file) is not sent.
            if let previous, previous.metadata.source == store.url, memory.listDigest != nil {
                if let etag = memory.etag, ValidatorFields.isValidETag(etag) {
                    headers.append("If-None-Match: \(etag)")
                    conditional = true
                }
                if let modified = memory.lastModified, ValidatorFields.isValidLastModified(modified) {
                    headers.append("If-Modified-Since: \(modified)")
                    conditional = true
                }
            }
        }
        self.challenge = challenge
        self.isConditional = conditional
        self.request = HTTPRequest(
            url: store.url, headers: headers, caFile: store.caFile,
            timeout: store.policy.requestTimeout, maxResponseSize: store.policy.maxResponseSize,
            proxy: store.policy.proxy)
    }

    /// The parsed list and, in challenge mode, the configured key whose signature covered it.
    func verifiedList(from response: HTTPResponse, now: Int64) throws(UpdateFailure) -> (list: PinList, signedBy: PublicKey?) {
        try checkStatus(of: response, now: now)
        var signedBy: PublicKey?
        if let challenge {
            guard let signature = response.header(Self.signatureHeader) else {
                throw UpdateFailure(.invalidSignature, "the response has no X-Cert-Pinning-Signature header")
            }
            let verifier = SignatureVerifier(keys: store.publicKeys)
            signedBy = verifier.keyVerifyingChallengeResponse(challenge: challenge, body: response.body, signatureBase64: signature)
            guard signedBy != nil else {
                throw UpdateFailure(.invalidSignature, "the response signature does not verify under any configured public key")
            }
        }
        do {
            return (try PinList(json: response.body), signedBy)
        } catch {
            throw UpdateFailure(.invalidData, "the list is malformed: \(error.reason)")
        }
    }

    /// Static mode: `verifiedList`'s checks, with the entries kept compact (each is verified
    /// later, by `PinMerger.mergeStatic`), and whether the list carried a `domainsConfig`.
    /// `verifying`: handed each chunk of entries as soon as it is read; stopped if the list is refused.
    func staticEntries(from response: HTTPResponse, now: Int64, verifying early: EarlyVerification? = nil)
        throws(UpdateFailure) -> (entries: StaticEntries, hadDomainsConfig: Bool)
    {
        do {
            try checkStatus(of: response, now: now)
        } catch {
            early?.stop()
            throw error
        }
        var entries = StaticEntries()
        do {
            let rest = try PinList.forEachEntry(json: response.body) { pin in
                entries.append(pin)
                if let early, let chunk = entries.fullChunk { early.add(chunk) }
            }
            return (entries, rest.domainsConfig != nil)
        } catch {
            early?.stop()
            throw UpdateFailure(.invalidData, "the list is malformed: \(error.reason)")
        }
    }

    private func checkStatus(of response: HTTPResponse, now: Int64) throws(UpdateFailure) {
        if let refusal = UpdateFailure(status: response, now: now) { throw refusal }
    }
}

extension UpdateFailure {
    /// The failure a non-2xx answer is, nil for 2xx. Only `429` and `503` carry the server's
    /// `Retry-After` (which `Backoff.retryAt` honours up to `retry_max`): on other statuses it is
    /// no request to wait. Public for the fleet simulation, which answers its hosts through it.
    public init?(status response: HTTPResponse, now: Int64) {
        guard !(200..<300).contains(response.status) else { return nil }
        let retryAfter = [429, 503].contains(response.status) ? response.retryAfter(now: now) : nil
        self.init(
            .httpError,
            "the server answered HTTP \(response.status)" + (retryAfter.map { " (Retry-After \($0)s)" } ?? ""),
            retryAfter: retryAfter)
    }
}
