import Logging
import Synchronization

/// Writes the metrics file for the scheduling loop without making it wait: on a thread of its
/// own (see `BlockingWork`), one write at a time, and only the newest request is kept while one
/// runs, so a stalled disk delays the file but neither the loop nor a growing queue of writes.
final class MetricsWriter: Sendable {
    private struct Request {
        var configuration: Configuration
        var now: Int64
    }
    private struct State {
        var writing = false
        var next: Request?
    }
    private let state = Mutex(State())
    private let logger: Logger
    private let writer: AtomicWriter

    init(logger: Logger, writer: AtomicWriter = MetricsFile.writer) {
        self.logger = logger
        self.writer = writer
    }

    func request(configuration: Configuration, now: Int64) {
        guard configuration.metricsFile != nil else { return }
        let start = state.withLock { state in
            state.next = Request(configuration: configuration, now: now)
            defer { state.writing = true }
            return !state.writing
        }
        if start { BlockingWork.start(named: "pinkeeper-metrics") { self.drain() } }
    }

    /// Waits at most `limit` for a write in progress, so that exit leaves no temporary file behind.
    func settle(within limit: Duration) async {
        let deadline = ContinuousClock.now + limit
        while state.withLock({ $0.writing }) && ContinuousClock.now < deadline {
            try? await ThreadSleep.sleep(for: .milliseconds(10))
        }
    }

    private func drain() {
        while let request = state.withLock({ state -> Request? in
            defer { state.next = nil }
            if state.next == nil { state.writing = false }
            return state.next
        }) {
            MetricsFile.update(configuration: request.configuration, now: request.now, writer: writer, logger: logger)
        }
    }
}
