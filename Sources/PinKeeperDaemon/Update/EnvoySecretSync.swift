import PinKeeper
import Synchronization
import Logging

/// Keeps a store's Envoy secrets equal to what its readers would trust now: after every publish
/// (`update`, `import`, the daemon's passes and reconciliations) and, from the daemon's loop,
/// when one of its pins expires. One sync at a time, each from the file as it is when the sync
/// starts, so a slow earlier sync can never overwrite a later one's files.
public final class EnvoySecretSync: Sendable {
    public let writer: EnvoySecretWriter
    public let cacheDirectory: String
    /// One sync at a time; the names each store already had a warning for, to warn once.
    private let turn = Mutex<[String: Set<String>]>([:])

    public init(writer: EnvoySecretWriter, cacheDirectory: String) {
        self.writer = writer
        self.cacheDirectory = cacheDirectory
    }

    /// Blocking file work: call it off the cooperative pool. Returns when the secrets change
    /// next without an update (nil: never, or the store's pins could not be read).
    public func sync(_ store: StoreConfig, now: Int64) -> Int64? {
        turn.withLock { warned in
            let snapshot: CacheReader.Snapshot
            do {
                snapshot = try store.pinReader(cacheDirectory: cacheDirectory).snapshot()
            } catch {
                writer.logger.error(
                    "cannot read the store's pins for its Envoy secrets; Envoy keeps the ones it read last",
                    metadata: ["store": "\(store.id)", "reason": "\(error)"])
                return nil
            }
            var secrets = EnvoySecrets(store: store, cache: snapshot.cache, fallbackPins: snapshot.fallbackPins, now: now)
            let skipped = Set(secrets.skipped)
            secrets.skipped = secrets.skipped.filter { !(warned[store.id]?.contains($0) ?? false) }
            warned[store.id] = skipped
            writer.write(secrets, store: store.id)
            return secrets.nextChange
        }
    }

    /// A store that left the configuration: its names match nothing from now on.
    public func retire(_ store: String) {
        turn.withLock { warned in
            warned[store] = nil
            writer.retire(store: store)
        }
    }
}
