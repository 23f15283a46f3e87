import CMalloc
import Glibc
import Synchronization
import Testing
@testable import PinKeeperDaemon

/// The watcher is one per process and takes over SIGTERM, SIGINT, SIGHUP and SIGUSR1: each test
/// runs in a child process of its own (an exit test).
@Suite("SignalWatcher")
struct SignalWatcherTests {
    /// Signals handled so far, by the watcher's thread.
    static let handled = Atomic<Int>(0)

    /// Raises SIGUSR1 and waits until the handler has run for it (pending signals of one kind
    /// merge, so one at a time).
    static func raiseAndWait() {
        let before = handled.load(ordering: .sequentiallyConsistent)
        raise(SIGUSR1)
        while handled.load(ordering: .sequentiallyConsistent) == before { usleep(50) }
    }

    /// Each signal used to wrap the stored handler in two more reabstraction thunks (a closure
    /// kept in a `Mutex`, read out with `withLock { $0 }`): memory grew with every signal, and
    /// each call went through the thunks of all signals before it.
    @Test("thousands of signals: the handler runs for each, and the heap does not grow with them")
    func signalsDoNotAccumulate() async {
        await #expect(processExitsWith: .success) {
            let watcher = try! SignalWatcher { signal in
                precondition(signal == SIGUSR1)
                _ = SignalWatcherTests.handled.add(1, ordering: .sequentiallyConsistent)
            }
            for _ in 0..<100 { SignalWatcherTests.raiseAndWait() }  // the first ones set up what stays
            let before = mallinfo2().uordblks
            for _ in 0..<2_000 { SignalWatcherTests.raiseAndWait() }
            let grown = Int(mallinfo2().uordblks) - Int(before)
            precondition(grown < 16 * 1024, "the heap grew by \(grown) bytes over 2,000 signals")
            withExtendedLifetime(watcher) {}
        }
    }
}
