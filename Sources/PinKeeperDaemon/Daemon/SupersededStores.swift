import Synchronization

/// Stores whose work in the running pass a reload or SIGUSR1 made obsolete (changed, added,
/// removed, or asked for afresh). Shared by the loop, which adds to it, and the pass, which
/// starts none of them; the loop drops the pass's reports for them so their new due time stands.
final class SupersededStores: Sendable {
    private let ids = Mutex<Set<String>>([])
    private let left = Mutex<Set<String>>([])

    func insert(_ id: String) { _ = ids.withLock { $0.insert(id) } }
    func contains(_ id: String) -> Bool { ids.withLock { $0.contains(id) } }

    /// The pass asks when a store's turn comes; yes for a superseded store, which it then
    /// leaves out, and which is remembered so (`leftOut`).
    func skips(_ id: String) -> Bool {
        guard contains(id) else { return false }
        _ = left.withLock { $0.insert(id) }
        return true
    }

    /// The stores the pass never started: the start-up pass still owes them their first attempt.
    var leftOut: Set<String> { left.withLock { $0 } }
}
