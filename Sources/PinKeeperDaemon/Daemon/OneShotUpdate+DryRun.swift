extension OneShotUpdate {
    /// `pinkeeper update --dry-run`: every selected store, due or not, at most `concurrency` at
    /// once; one preview per store in configuration order.
    public static func dryRun(
        configuration: Configuration, storeIDs: [String],
        updater: StoreUpdater
    ) async -> [StoreUpdater.Preview] {
        let selected = storeIDs.isEmpty ? configuration.stores : storeIDs.compactMap(configuration.store)
        return await withTaskGroup(of: (Int, StoreUpdater.Preview).self) { group in
            var previews = [StoreUpdater.Preview?](repeating: nil, count: selected.count)
            var next = 0
            func startNext() {
                guard next < selected.count else { return }
                let index = next
                next += 1
                group.addTask { (index, await updater.dryRun(selected[index])) }
            }
            for _ in 0..<min(max(configuration.concurrency, 1), selected.count) { startNext() }
            while let (index, preview) = await group.next() {
                previews[index] = preview
                startNext()
            }
            return previews.compactMap { $0 }
        }
    }
}

extension StoreUpdater.Preview {
    /// The `update` line of the store with what would change:
    /// `<store> <result> pins=N next=ISO added=A unchanged=U expired=E dropped=D[ unsigned=ignored][ reason="…"]`.
    public var line: String {
        var extra = " added=\(changes.added) unchanged=\(changes.unchanged) expired=\(changes.expired) dropped=\(changes.dropped)"
        if ignoredUnsignedFields { extra += " unsigned=ignored" }
        return OneShotUpdate.Line(
            store: store, result: result.rawValue, pins: pins, nextUpdate: nextAttempt,
            reason: reason, failed: result != .ok
        ).text(extra: extra)
    }
}
