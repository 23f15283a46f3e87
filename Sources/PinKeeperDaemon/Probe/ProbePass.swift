/// Probes every target of several stores, at most `concurrency` handshakes at a time, and
/// returns one record per target in the order given (stores, then their targets).
public enum ProbePass {
    public struct Result: Sendable {
        public var store: String
        public var record: ProbeRecord
    }

    public static func run(_ stores: [StoreConfig], prober: Prober, concurrency: Int = Configuration.defaultConcurrency) async -> [Result] {
        let jobs = stores.flatMap { store in store.probe.targets.map { (store, $0) } }
        // One trust store per CA file (nil: the system's) for the whole pass: loading it costs
        // more than the handshake. It reads files, so on a thread of its own (`BlockingWork`):
        // a stalled disk must not hold the cooperative pool, and with it the watchdog pings.
        let caFiles = Set(stores.filter { !$0.probe.targets.isEmpty }.map(\.probe.caFile))
        let trust = await BlockingWork.run { () -> [String?: Swift.Result<TLSClientContext, TLSConnectError>] in
            var loaded: [String?: Swift.Result<TLSClientContext, TLSConnectError>] = [:]
            for caFile in caFiles {
                loaded[caFile] = Swift.Result { () throws(TLSConnectError) in try TLSClientContext(caFile: caFile) }
            }
            return loaded
        }
        return await withTaskGroup(of: (Int, ProbeRecord).self) { group in
            var records = [ProbeRecord?](repeating: nil, count: jobs.count)
            var next = 0
            func startNext() {
                guard next < jobs.count else { return }
                let index = next
                next += 1
                let (store, target) = jobs[index]
                let context = trust[store.probe.caFile]
                group.addTask { (index, await prober.probe(target, of: store, trust: context)) }
            }
            for _ in 0..<min(max(concurrency, 1), jobs.count) { startNext() }
            while let (index, record) = await group.next() {
                records[index] = record
                if !Task.isCancelled { startNext() }
            }
            return jobs.enumerated().map { index, job in
                Result(
                    store: job.0.id,
                    record: records[index]
                        ?? ProbeRecord(
                            target: job.1.id, outcome: .error, checked: prober.clock.now(), reason: "cancelled before it started"))
            }
        }
    }
}
