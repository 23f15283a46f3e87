import PinKeeper
import Logging

extension StoreUpdater {
    /// The `ListDigest` of a challenge-mode list that passed verification: every entry (the
    /// response signature covered them all, and `domainsConfig` with them). A static list's is
    /// made by `PinMerger.mergeStatic`.
    func servedDigest(_ list: PinList) -> String {
        ListDigest.of(pins: list.pins, domainsConfig: list.domainsConfig)
    }

    /// Logs the digest when it differs from the one remembered (the first one included), and
    /// returns what to remember.
    func noteServedList(_ digest: String?, previous: String?, store: StoreConfig) -> String? {
        guard let digest, digest != previous else { return previous }
        logger.notice(
            "the pinning service served a different list",
            metadata: [
                "event": "\(LogEventID.listChanged.rawValue)", "store": "\(store.id)", "list_digest": "\(digest)",
                "previous": "\(previous ?? "none")",
            ])
        return digest
    }
}
