import Foundation
import Logging
@testable import PinKeeperDaemon
import Synchronization

/// Records what the daemon tells systemd, with the time each message arrived.
final class RecordingNotifier: ServiceNotifier {
    let watchdogMicroseconds: UInt64?
    private let messages = Mutex<[(at: ContinuousClock.Instant, text: String)]>([])

    init(watchdogMicroseconds: UInt64? = nil) { self.watchdogMicroseconds = watchdogMicroseconds }

    func notify(_ message: String) { messages.withLock { $0.append((ContinuousClock.now, message)) } }

    var all: [(at: ContinuousClock.Instant, text: String)] { messages.withLock { $0 } }
    var texts: [String] { all.map(\.text) }
}

/// The real libcurl fetcher, except that requests to `held` URLs wait until `release`: a pass
/// that stays in flight for as long as a test needs.
final class GatedFetcher: HTTPFetching {
    private struct State {
        var held: Set<String>
        var waiting: [CheckedContinuation<Void, Never>] = []
        var requested: [String] = []
    }
    private let real = CurlFetcher(userAgent: PinKeeperVersion.userAgent)
    private let state: Mutex<State>

    init(holding held: Set<String>) { state = Mutex(State(held: held)) }

    /// Every URL requested so far, in order (held ones included).
    var requested: [String] { state.withLock { $0.requested } }
    var waitingCount: Int { state.withLock { $0.waiting.count } }

    /// Lets the held requests go and stops holding.
    func release() {
        let waiting = state.withLock { state in
            state.held = []
            defer { state.waiting = [] }
            return state.waiting
        }
        for continuation in waiting { continuation.resume() }
    }

    func fetch(_ request: HTTPRequest) async throws(UpdateFailure) -> HTTPResponse {
        await withCheckedContinuation { continuation in
            let hold = state.withLock { state in
                state.requested.append(request.url)
                if state.held.contains(request.url) { state.waiting.append(continuation) }
                return state.held.contains(request.url)
            }
            if !hold { continuation.resume() }
        }
        return try await real.fetch(request)
    }
}

/// `Daemon.run` in this process, driven by a trigger stream instead of signals.
final class InProcessDaemon: Sendable {
    let notifier: RecordingNotifier
    private let input: AsyncStream<Trigger>.Continuation
    private let task: Task<Void, Never>
    private let nextConfiguration: Box
    private let reloads = ReloadGate()

    private final class Box: Sendable {
        let value: Mutex<Configuration>
        init(_ value: Configuration) { self.value = Mutex(value) }
    }

    /// Where a reload waits, after reading its configuration, while held: a slow disk.
    private final class ReloadGate: Sendable {
        private let state = Mutex((held: false, reads: 0))
        var reads: Int { state.withLock { $0.reads } }
        func hold(_ held: Bool) { state.withLock { $0.held = held } }
        func pass() {
            state.withLock { $0.reads += 1 }
            while state.withLock({ $0.held }) { usleep(5_000) }
        }
    }

    /// `concurrency`, when given, overrides the configuration's (and every reloaded one's).
    init(
        _ configuration: Configuration, notifier: RecordingNotifier = RecordingNotifier(), concurrency: Int? = nil,
        logger: Logger, makeUpdater: @escaping @Sendable (Configuration) -> StoreUpdater
    ) {
        self.notifier = notifier
        var configuration = configuration
        if let concurrency { configuration.concurrency = concurrency }
        let next = Box(configuration), gate = reloads
        nextConfiguration = next
        var daemon = Daemon(
            configuration: configuration,
            reload: {
                var reloaded = next.value.withLock { $0 }
                if let concurrency { reloaded.concurrency = concurrency }
                gate.pass()
                return .success(reloaded)
            }, makeUpdater: makeUpdater, notifier: notifier, logger: logger)
        let (triggers, input) = AsyncStream.makeStream(of: Trigger.self)
        self.input = input
        daemon.executor = DaemonTestPool.shared
        task = Task(executorPreference: DaemonTestPool.shared) { [daemon] in await daemon.run(triggers: triggers) }
    }

    /// What the next `.reload` reads.
    func setConfiguration(_ configuration: Configuration) { nextConfiguration.value.withLock { $0 = configuration } }

    func send(_ trigger: Trigger) { input.yield(trigger) }

    /// While held, a reload that has read its configuration waits before handing it over.
    func holdReloads(_ held: Bool) { reloads.hold(held) }
    /// How many times a reload has read the configuration.
    var reloadReads: Int { reloads.reads }

    func stop() async {
        input.yield(.terminate)
        await task.value
    }
}

extension Sandbox {
    func configuration(_ stores: [StoreConfig], metricsFile: String? = nil) -> Configuration {
        Configuration(
            cacheDirectory: cache.path, stateDirectory: state.path, metricsFile: metricsFile,
            stores: stores.sorted { $0.id < $1.id }, sources: [])
    }
}

/// Polls `condition` (without holding a thread) until it holds or `timeout` seconds pass.
@discardableResult
func eventually(timeout: Double, _ condition: () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + .milliseconds(Int(timeout * 1000))
    while !condition() {
        guard ContinuousClock.now < deadline else { return false }
        try? await Task.sleep(for: .milliseconds(20))
    }
    return true
}

extension Sandbox {
    func updater(fetcher: any HTTPFetching, fileSystem: any FileSystem = PosixFileSystem()) -> StoreUpdater {
        StoreUpdater(
            fetcher: fetcher, cache: CacheDirectory(path: cache.path, writer: AtomicWriter(fileSystem: fileSystem)),
            state: StateDirectory(path: state.path), logger: log.logger)
    }
}
