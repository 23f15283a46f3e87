import Dispatch
import Glibc

/// Turns SIGTERM, SIGINT, SIGHUP and SIGUSR1 into calls of `handler` on a dispatch queue.
/// The signals are unblocked first: a child can inherit a blocked mask from its parent, and
/// then SIGTERM would stay pending forever.
public final class SignalWatcher {
    public static let handled: [Int32] = [SIGTERM, SIGINT, SIGHUP, SIGUSR1]
    private let sources: [DispatchSourceSignal]

    public init(handler: @escaping @Sendable (Int32) -> Void) {
        var mask = sigset_t()
        sigemptyset(&mask)
        for signal in Self.handled { sigaddset(&mask, signal) }
        pthread_sigmask(SIG_UNBLOCK, &mask, nil)
        let queue = DispatchQueue(label: "pinkeeper.signals")
        sources = Self.handled.map { number in
            signal(number, SIG_IGN)  // the dispatch source sees it; the default action must not kill us
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler { handler(number) }
            source.resume()
            return source
        }
    }

    deinit { sources.forEach { $0.cancel() } }
}
