/// A fetcher that lets at most the gate's permits fetch at once: `UpdatePass` bounds the
/// transfers of a pass with it, not the stores, whose file work before and after the fetch
/// then overlaps other stores' transfers instead of holding a transfer's place.
struct BoundedFetcher: HTTPFetching {
    let fetcher: HTTPFetching
    let gate: AsyncSemaphore

    func fetch(_ request: HTTPRequest) async throws(UpdateFailure) -> HTTPResponse {
        guard await gate.acquire() else { throw UpdateFailure(.networkError, "transfer cancelled") }
        defer { gate.release() }
        return try await fetcher.fetch(request)
    }

    func prepare() { fetcher.prepare() }
    func preparationFinished() async { await fetcher.preparationFinished() }
}
