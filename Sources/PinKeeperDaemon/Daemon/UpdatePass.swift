/// Updates several stores concurrently and returns one report per store in the order given.
/// A store takes one of `concurrency` transfer slots when it starts and gives it back as soon as
/// its fetch has ended, so its verification and publishing (fsyncs included) overlap the next
/// store's transfer instead of holding its place: a 1,000-store pass spent more time between a
/// connection's two transfers than in them. At most as many stores again may be finishing
/// meanwhile. The next store starts as soon as a slot is free, not when a whole group has ended.
/// A store for which `skip` says yes when its turn comes is not started (its report says so, as
/// for a cancelled pass). The cache directory is listed for stale temp files once for the pass
/// (`TempListing`). The stores in `probeRefresh` are fetched because a probe asked for it, and
/// their state files count it.
public enum UpdatePass {
    public static func run(
        _ stores: [StoreConfig], updater: StoreUpdater,
        concurrency: Int = Configuration.defaultConcurrency,
        skip: (String) -> Bool = { _ in false }, probeRefresh: Set<String> = []
    ) async -> [StoreUpdater.Report] {
        let transfers = max(1, concurrency)
        let slots = AsyncSemaphore(permits: transfers)
        var updater = updater
        updater.cache.passListing = TempListing(directory: updater.cache.path)
        return await withTaskGroup(of: (Int, StoreUpdater.Report).self) { group in
            var reports = [StoreUpdater.Report?](repeating: nil, count: stores.count)
            var next = 0, running = 0
            while next < stores.count {
                if running == 2 * transfers, let (index, report) = await group.next() {
                    reports[index] = report
                    running -= 1
                    continue
                }
                guard await slots.acquire() else { break }  // cancelled
                while next < stores.count && skip(stores[next].id) { next += 1 }
                guard next < stores.count else {
                    slots.release()
                    break
                }
                let index = next, slot = TransferSlot(holding: slots)
                next += 1
                running += 1
                var storeUpdater = updater
                storeUpdater.fetcher = BoundedFetcher(fetcher: updater.fetcher, slot: slot)
                storeUpdater.probeRefresh = probeRefresh.contains(stores[index].id)
                group.addTask { [storeUpdater] in
                    defer { slot.release() }  // it ended without fetching
                    return (index, await storeUpdater.update(stores[index]))
                }
            }
            while let (index, report) = await group.next() { reports[index] = report }
            return reports.enumerated().map { index, report in
                report
                    ?? StoreUpdater.Report(
                        store: stores[index].id, result: .networkError,
                        reason: "cancelled before it started", pins: 0, nextAttempt: 0)
            }
        }
    }
}
