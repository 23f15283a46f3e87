/// The daemon loop's probe timetable: when each store with probe targets is probed next, and
/// the one probe pass that may run at a time. Probe passes and update passes run side by side;
/// the loop waits for neither (but for both on stop), and hears of a probe pass's end as an event.
struct ProbeSchedule {
    private(set) var due: [String: Int64] = [:]
    private var running: Task<Void, Never>?
    /// Stores asked for (SIGUSR1, a reload, a new list) while a pass was running: probed again after it.
    private var again: Set<String> = []

    /// Next times from the state directory: a store whose recorded targets are exactly its
    /// configured ones keeps its plan across a restart; any other is due now.
    init(configuration: Configuration, state: ProbeStateDirectory, now: Int64) {
        for store in configuration.stores where !store.probe.targets.isEmpty {
            let saved = state.load(store: store.id)
            let unchanged = Set(saved.targets.map(\.target)) == Set(store.probe.targets.map(\.id))
            due[store.id] = unchanged ? (saved.next ?? now) : now
        }
    }

    /// The earliest due time, nil while a pass runs (its end is an event of its own) or without probes.
    var nextDue: Int64? { running == nil ? due.values.min() : nil }

    mutating func startDue(
        configuration: Configuration, now: Int64, runner: ProbeRunner, concurrency: Int,
        executor: (any TaskExecutor)?, finished: @escaping @Sendable ([String: StoreProbes]) -> Void
    ) {
        guard running == nil else { return }
        let stores = configuration.stores.filter { store in due[store.id].map { $0 <= now } ?? false }
        guard !stores.isEmpty else { return }
        running = Task(executorPreference: executor) { finished(await runner.probe(stores, concurrency: concurrency)) }
    }

    /// A pass ended with these next times. Stores removed meanwhile stay removed; stores asked
    /// for meanwhile stay due.
    mutating func finished(_ results: [String: StoreProbes]) {
        running = nil
        for (store, time) in results.compactMapValues(\.next) where due[store] != nil && !again.contains(store) { due[store] = time }
        again = []
    }

    /// Probes `stores` (every store with targets when nil) at the next turn of the loop.
    mutating func probeNow(_ stores: [String]? = nil, now: Int64) {
        for store in stores ?? Array(due.keys) where due[store] != nil {
            due[store] = now
            if running != nil { again.insert(store) }
        }
    }

    /// After a reload: stores that gained or changed probes, or whose pins may now answer
    /// differently, are probed now; others keep their times; stores without targets are dropped.
    mutating func reconfigure(from old: Configuration, to new: Configuration, now: Int64) {
        var fresh: [String: Int64] = [:]
        for store in new.stores where !store.probe.targets.isEmpty {
            if let before = old.store(store.id), before.probe == store.probe, before == store, let time = due[store.id] {
                fresh[store.id] = time
            } else {
                fresh[store.id] = now
                if running != nil { again.insert(store.id) }
            }
        }
        due = fresh
    }

    /// Whether a pass runs: shutdown waits for its end.
    var isRunning: Bool { running != nil }

    /// Shutdown: the running handshakes stop within 200 ms and nothing of the pass is recorded,
    /// unless its results were already being written: those are written whole.
    func cancel() { running?.cancel() }
}
