public import FoundationEssentials
import Logging
import PinKeeper

extension StoreUpdater.ListSource {
    /// Names the file of an import in the success line, so the journal tells an import from a fetch.
    var logMetadata: Logger.Metadata {
        if case .file(let path, _) = self { ["imported_from": "\(path)"] } else { [:] }
    }
}

extension StoreUpdater {
    /// `pinkeeper import`: a static list from a file, verified, merged and published exactly as
    /// `update` would a fetched one (the same lock, reconciliation, merge and state).
    public func importList(_ store: StoreConfig, path: String, body: Data) async -> Report {
        await update(store, from: .file(path: path, body: body))
    }

    /// An imported list that fails: nothing is recorded, and the store stays due when it was.
    /// Nothing is published either, unless the file was replaced and only the directory fsync
    /// after the rename failed (`replaced`): the error then says the import is in place.
    func rejectedImport(
        _ store: StoreConfig, _ error: UpdateFailure, from source: ListSource, pins: Int,
        published: CacheFile?, replaced: Bool = false, record: StoreState, now: Int64
    ) -> Report {
        logger.error(
            replaced ? "import published, but the file may not survive a power loss" : "import failed; nothing was published",
            metadata: [
                "store": "\(store.id)", "result": "\(error.result.rawValue)", "reason": "\(error.reason)", "pins": "\(pins)",
            ].merging(source.logMetadata) { $1 })
        return Report(
            store: store.id, result: error.result, reason: error.reason, pins: pins,
            nextAttempt: DueTime.of(cache: published, state: record, policy: store.policy, now: now))
    }
}
