import Logging

/// Saves one of a store's records (its state, its probe results), or logs one warning naming the
/// store, the reason and what is lost without it: a record the daemon cannot write never fails
/// an update or a probe pass.
func saveOrWarn(
    _ what: String, store: String, otherwise consequence: String, logger: Logger, _ save: () throws(FileError) -> Void
) {
    do {
        try save()
    } catch let error where error.afterReplacing {
        // Written and in place; only the directory fsync after the rename failed.
        logger.warning(
            "saved \(what), but a power loss may undo it; check the file system that holds it",
            metadata: ["store": "\(store)", "reason": "\(error)"])
    } catch {
        logger.warning("cannot save \(what); \(consequence)", metadata: ["store": "\(store)", "reason": "\(error)"])
    }
}
