import Logging
import PinKeeper

/// How an update ends: the store's record saved, one log line for the outcome, and the warnings
/// that go with it.
extension StoreUpdater {
    func succeeded(_ store: StoreConfig, _ plan: Plan, record: StoreState, source: ListSource, now: Int64) async -> Report {
        var record = record
        record.lastResult = .ok
        record.lastReason = nil
        record.lastSuccess = now
        record.authoritative = store.policy.authoritative
        record.consecutiveFailures = 0
        // When the file was left as it was, its nextUpdate is stale: remember the new one here.
        record.retryAt = plan.published ? nil : plan.nextUpdate
        (record.etag, record.lastModified) = plan.validators
        record.bodyDigest = plan.bodyDigest
        await BlockingWork.run { [record] in remember(record, store) }
        logger.info(
            "update succeeded",
            metadata: [
                "event": "\(LogEventID.updateSucceeded.rawValue)", "store": "\(store.id)", "result": "ok", "pins": "\(plan.pins.count)",
                "next_update": "\(Timestamp.iso(plan.nextUpdate))", "not_modified": "\(plan.notModified)",
            ].merging(source.logMetadata) { $1 })
        warnIfExpiring(store, pins: plan.pins, now: now)
        return Report(store: store.id, result: .ok, pins: plan.pins.count, nextAttempt: plan.nextUpdate, notModified: plan.notModified)
    }

    /// A failure of the server, the list or the disk: back-off, recorded so that a restart keeps it.
    func failed(
        _ store: StoreConfig, _ error: UpdateFailure, record: StoreState, validPins: [Pin], published: CacheFile?, now: Int64
    ) async -> Report {
        var record = record
        record.lastResult = error.result
        record.lastReason = error.reason
        record.consecutiveFailures =
            record.consecutiveFailures.addingReportingOverflow(1).overflow ? Int.max : record.consecutiveFailures + 1
        let retry = Backoff.retryAt(
            now: now, failures: record.consecutiveFailures, policy: store.policy,
            retryAfter: error.retryAfter, regularUpdate: published?.metadata.nextUpdate, random: random)
        record.retryAt = retry
        await BlockingWork.run { [record] in remember(record, store) }
        let event: LogEventID = error.result == .storeEmpty ? .storeEmpty : .updateFailed
        logger.error(
            "update failed",
            metadata: [
                "event": "\(event.rawValue)", "store": "\(store.id)", "result": "\(error.result.rawValue)", "reason": "\(error.reason)",
                "pins": "\(validPins.count)", "next_update": "\(Timestamp.iso(retry))",
                "retry_in": "\(Units.describe(seconds: retry.saturatingSubtracting(now)))",
            ])
        warnIfExpiring(store, pins: validPins, now: now)
        return Report(store: store.id, result: error.result, reason: error.reason, pins: validPins.count, nextAttempt: retry)
    }

    /// Once per update: the common name whose newest pin expires first, if that is inside
    /// `expiration_update_threshold` (no replacement has been published yet).
    func warnIfExpiring(_ store: StoreConfig, pins: [Pin], now: Int64) {
        guard let soonest = ExpiringPins.soonest(pins, now: now),
            soonest.expires.saturatingSubtracting(now) < store.policy.expirationUpdateThreshold
        else { return }
        logger.warning(
            "pins expiring without a replacement",
            metadata: [
                "event": "\(LogEventID.pinsExpiring.rawValue)", "store": "\(store.id)", "name": "\(soonest.name)",
                "expires": "\(Timestamp.iso(soonest.expires))",
                "expires_in": "\(Units.describe(seconds: soonest.expires.saturatingSubtracting(now)))",
            ])
    }

    /// Authoritative: one warning per update that dropped pins the verified response no longer lists.
    func warnUnlisted(_ store: StoreConfig, dropped: Int, pins: Int) {
        logger.warning(
            "dropped pins the pinning service no longer lists",
            metadata: [
                "event": "\(LogEventID.pinsDropped.rawValue)", "store": "\(store.id)", "dropped": "\(dropped)", "pins": "\(pins)",
                "cause": "unlisted",
            ])
    }

    func remember(_ memory: StoreState, _ store: StoreConfig) {
        saveOrWarn("store state", store: store.id, otherwise: "back-off will not survive a restart", logger: logger) {
            () throws(FileError) in
            try state.save(memory, store: store.id)
        }
    }

    func warnAbout(_ outcome: PinMerger.Outcome, received: Int, store: StoreConfig) {
        if received > 0 && outcome.expiredReceived == received {
            logger.warning(
                "the list holds only expired entries; nothing was added",
                metadata: [
                    "store": "\(store.id)", "entries": "\(received)",
                ])
        }
        if outcome.ignoredUnsignedFields {
            logger.warning(
                "the static list carries depth or domainsConfig, which its signatures do not cover; both are ignored",
                metadata: [
                    "store": "\(store.id)"
                ])
        }
        if !outcome.unexpectedNames.isEmpty {
            logger.warning(
                "the list pins common names outside expected_common_names",
                metadata: [
                    "store": "\(store.id)", "names": "\(outcome.unexpectedNames.joined(separator: ","))",
                ])
        }
    }
}
