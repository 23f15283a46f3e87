import Synchronization

/// One of an update pass's `concurrency` transfer slots, held by a store from its start until
/// its fetch has ended (or, if it never fetches, until it ends): the store's verification and
/// publishing then run while the next store already uses the slot.
final class TransferSlot: Sendable {
    private let slots: AsyncSemaphore
    private let held = Atomic<Bool>(true)

    /// For a permit just taken from `slots`.
    init(holding slots: AsyncSemaphore) { self.slots = slots }

    /// Gives the slot back; only the first call does.
    func release() {
        if held.exchange(false, ordering: .acquiringAndReleasing) { slots.release() }
    }
}

/// The fetcher of one store of a pass: gives the store's transfer slot back once its fetch has
/// ended, before the response is verified and published.
struct BoundedFetcher: HTTPFetching {
    let fetcher: any HTTPFetching
    let slot: TransferSlot

    func fetch(_ request: HTTPRequest) async throws(UpdateFailure) -> HTTPResponse {
        defer { slot.release() }
        return try await fetcher.fetch(request)
    }

    func prepare() { fetcher.prepare() }
    func preparationFinished() async { await fetcher.preparationFinished() }
}
