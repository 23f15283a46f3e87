import PinKeeper
import Synchronization

/// The parsed form of the version of each file this process last read or wrote, so an update
/// of a large store does not parse the daemon's own unchanged cache file again.
final class FileMemo<Value: Sendable>: Sendable {
    private let entries = Mutex<[String: (identity: FileIdentity, value: Value)]>([:])

    func entry(for path: String) -> (identity: FileIdentity, value: Value)? { entries.withLock { $0[path] } }
    func remember(_ value: Value, identity: FileIdentity, for path: String) {
        entries.withLock { $0[path] = (identity, value) }
    }
}
