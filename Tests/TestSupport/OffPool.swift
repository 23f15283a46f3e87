import Foundation

/// Runs a test's blocking body (child processes awaited with sleeps, polling with usleep) on a
/// thread of its own. Swift Testing calls a synchronous test on the cooperative pool, which has
/// one thread per core: a few suites blocking there for minutes leave none for the tests that
/// await (in-process daemons, update passes), whose waits then time out.
package func offPool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread.detachNewThread { continuation.resume(with: Result { try body() }) }
    }
}
