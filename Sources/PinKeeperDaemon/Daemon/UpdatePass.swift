/// Updates several stores concurrently and returns one report per store in the order given.
/// At most `concurrency` fetch at once; as many more may be reading their files before their
/// fetch or verifying and publishing after it, so a transfer slot is never held while a store
/// waits for the disk (a 1,000-store pass spent more time in fsync than on the network). The
/// next store starts as soon as any store ends, not when a whole group has. A store for which
/// `skip` says yes when its turn comes is not started (its report says so, as for a cancelled pass).
/// The cache directory is listed for stale temp files once for the pass (`TempListing`).
public enum UpdatePass {
    public static func run(
        _ stores: [StoreConfig], updater: StoreUpdater,
        concurrency: Int = Configuration.defaultConcurrency,
        skip: (String) -> Bool = { _ in false }
    ) async -> [StoreUpdater.Report] {
        let transfers = max(1, concurrency)
        var updater = updater
        updater.fetcher = BoundedFetcher(fetcher: updater.fetcher, gate: AsyncSemaphore(permits: transfers))
        updater.cache.passListing = TempListing(directory: updater.cache.path)
        return await withTaskGroup(of: (Int, StoreUpdater.Report).self) { group in
            var reports = [StoreUpdater.Report?](repeating: nil, count: stores.count)
            var next = 0
            func startNext() {
                while next < stores.count && skip(stores[next].id) { next += 1 }
                guard next < stores.count else { return }
                let index = next
                next += 1
                group.addTask { [updater] in (index, await updater.update(stores[index])) }
            }
            for _ in 0..<min(2 * transfers, stores.count) { startNext() }
            while let (index, report) = await group.next() {
                reports[index] = report
                if !Task.isCancelled { startNext() }
            }
            return reports.enumerated().map { index, report in
                report
                    ?? StoreUpdater.Report(
                        store: stores[index].id, result: .networkError,
                        reason: "cancelled before it started", pins: 0, nextAttempt: 0)
            }
        }
    }
}
