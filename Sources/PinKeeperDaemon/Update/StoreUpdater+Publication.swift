import FoundationEssentials
import Logging
import PinKeeper

/// What a plan publishes besides the pins: a static list's file written while it is verified,
/// the validators kept for the next request, and whether the update is a catch-up.
extension StoreUpdater {
    /// The next update and the file of a static list, made while its new entries are verified.
    struct EarlyPublication: Sendable {
        var nextUpdate: Int64
        /// Written on a thread of its own and awaited by `plan`, so that the merge (on the pool)
        /// never waits for the disk; nil if it could not be written (the publish after the
        /// verification then reports why).
        var file: Task<AtomicWriter.PreparedFile?, Never>
    }

    /// `plan`'s schedule and file for the pins of `preview`, as they are made after the merge.
    func earlyPublication(_ store: StoreConfig, published previous: CacheFile?, now: Int64, writes: EarlyWrites)
        -> @Sendable (PinMerger.StaticPreview) -> EarlyPublication
    {
        let catchingUp = Self.isCatchUp(previous, store: store, now: now)
        return { [cache, random] preview in
            let next = NextUpdate.scheduled(of: preview, now: now, policy: store.policy, random: random, catchingUp: catchingUp)
            let metadata = CacheFile.Metadata(store: store.id, source: store.url, updated: now, nextUpdate: next, mode: store.mode)
            let file = Task.detached {
                await BlockingWork.run { try? cache.prepare(pins: preview.pins, domainsConfig: nil, metadata: metadata) }
            }
            writes.started(file)
            return EarlyPublication(nextUpdate: next, file: file)
        }
    }

    /// The response's `ETag` and `Last-Modified`, each only if it may be sent back as it is: an
    /// invalid one is not kept, and the next request is not conditional on it.
    func keptValidators(of response: HTTPResponse, store: StoreConfig) -> (etag: String?, lastModified: String?) {
        let etag = response.header("etag"), lastModified = response.header("last-modified")
        var refused: Logger.Metadata = [:]
        if let etag, !ValidatorFields.isValidETag(etag) { refused["etag"] = "\(etag)" }
        if let lastModified, !ValidatorFields.isValidLastModified(lastModified) { refused["last_modified"] = "\(lastModified)" }
        if !refused.isEmpty {
            logger.debug(
                "the server sent a validator that is no valid header value; it is not sent back",
                metadata: [
                    "store": "\(store.id)"
                ].merging(refused) { $1 })
        }
        return (refused["etag"] == nil ? etag : nil, refused["last_modified"] == nil ? lastModified : nil)
    }

    static func hexDigest(_ body: Data) -> String {
        lowerHex(body.withUnsafeBytes { SHA256.digest($0) })
    }

    /// A catch-up update: nothing valid was cached, or the update is later than planned by more
    /// than the splay window (after downtime or an outage, when a whole fleet may re-synchronise).
    static func isCatchUp(_ previous: CacheFile?, store: StoreConfig, now: Int64) -> Bool {
        let hasValidPins = previous?.list.pins.contains { !$0.isExpired(at: now) } ?? false
        return NextUpdate.isCatchUp(planned: hasValidPins ? previous?.metadata.nextUpdate : nil, now: now, policy: store.policy)
    }
}
