import Glibc
import Synchronization

/// Turns SIGTERM, SIGINT, SIGHUP and SIGUSR1 into calls of `handler` on a thread of its own.
/// The signals are unblocked first: a child can inherit a blocked mask from its parent, and
/// then SIGTERM would stay pending forever. Not a dispatch source: that would start
/// libdispatch's 1 s timer (see `ThreadPoolExecutor`). The signal handler writes the number to
/// a pipe (async-signal-safe); the thread sleeps in `read` until a byte arrives.
/// One watcher at a time; after it is gone the signals are caught and dropped.
public final class SignalWatcher: Sendable {
    public static let handled: [Int32] = [SIGTERM, SIGINT, SIGHUP, SIGUSR1]

    public init(handler: @escaping @Sendable (Int32) -> Void) throws(RuntimeSetupError) {
        let pipe = try SignalPipe.shared.get()
        var mask = sigset_t()
        sigemptyset(&mask)
        for signal in Self.handled { sigaddset(&mask, signal) }
        pthread_sigmask(SIG_UNBLOCK, &mask, nil)
        pipe.handler.withLock { $0 = SignalHandler(handler) }
        for number in Self.handled {
            var action = sigaction()
            action.__sigaction_handler.sa_handler = { number in SignalPipe.forward(number) }
            sigemptyset(&action.sa_mask)
            action.sa_flags = SA_RESTART
            sigaction(number, &action, nil)
        }
    }

    deinit { try? SignalPipe.shared.get().handler.withLock { $0 = nil } }
}

/// The write end, read by the C signal handler: set once before any handler is installed.
nonisolated(unsafe) private var signalPipeWriteEnd: Int32 = -1

/// The handler in a class, never a bare closure in the `Mutex`: `withLock`'s `inout` access to a
/// value of function type converts the closure to the generic representation and back, and writes
/// the converted closure back, so each signal wrapped the stored handler in two more thunks. Found
/// by `scripts/soak.sh`: two small objects leaked per SIGUSR1, and every call of the handler went
/// through all the thunks of the signals before it, until the signal thread's stack would overflow.
private final class SignalHandler: Sendable {
    let call: @Sendable (Int32) -> Void
    init(_ call: @escaping @Sendable (Int32) -> Void) { self.call = call }
}

private final class SignalPipe: Sendable {
    static let shared = Result { () throws(RuntimeSetupError) in try SignalPipe() }
    let handler = Mutex<SignalHandler?>(nil)

    private init() throws(RuntimeSetupError) {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else {
            throw RuntimeSetupError(
                description: "cannot create the signal pipe: \(String(cString: strerror(errno))); check the open-file limit (LimitNOFILE=)")
        }
        // Hooks must not inherit it; a full pipe drops a signal rather than block the handler.
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        _ = fcntl(ends[1], F_SETFL, O_NONBLOCK)
        signalPipeWriteEnd = ends[1]
        let readEnd = ends[0]
        BlockingWork.start(named: "pinkeeper-signals") { [self] in
            var byte: UInt8 = 0
            while true {
                guard read(readEnd, &byte, 1) == 1 else { continue }  // EINTR
                let handler = handler.withLock { $0 }
                handler?.call(Int32(byte))
            }
        }
    }

    /// In the signal handler: only async-signal-safe calls, and errno as it was.
    static func forward(_ number: Int32) {
        let saved = errno
        var byte = UInt8(truncatingIfNeeded: number)
        _ = write(signalPipeWriteEnd, &byte, 1)
        errno = saved
    }
}
