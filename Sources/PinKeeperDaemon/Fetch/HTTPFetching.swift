/// Fetches one URL. The production implementation is libcurl; the seam lets the update
/// pipeline be exercised with canned responses.
public protocol HTTPFetching: Sendable {
    func fetch(_ request: HTTPRequest) async throws(UpdateFailure) -> HTTPResponse
    /// Fetches will follow: start setting up what the first one would wait for, in parallel with
    /// the caller's other work. Optional: a fetch sets up whatever is missing itself.
    func prepare()
    /// Returns once what `prepare` started has finished; call it before the process exits.
    func preparationFinished() async
}

extension HTTPFetching {
    public func prepare() {}
    public func preparationFinished() async {}
}
