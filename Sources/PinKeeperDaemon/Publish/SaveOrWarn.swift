import Logging

/// Saves one of a store's records (its state, its probe results), or logs one warning naming the
/// store, the reason and what is lost without it: a record the daemon cannot write never fails
/// an update or a probe pass.
func saveOrWarn(
    _ what: String, store: String, otherwise consequence: String, logger: Logger, _ save: () throws(FileError) -> Void
) {
    do {
        try save()
    } catch {
        logger.warning("cannot save \(what); \(consequence)", metadata: ["store": "\(store)", "reason": "\(error)"])
    }
}
