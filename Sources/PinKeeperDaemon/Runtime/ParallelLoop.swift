import FoundationEssentials
import Synchronization

/// `DispatchQueue.concurrentPerform` on threads of its own (see `ThreadPoolExecutor` for why
/// not libdispatch): the calling thread and one more per further active core take iterations
/// in turn until none is left; returns when every iteration has ended.
enum ParallelLoop {
    static func run(
        iterations: Int, threads: Int = ProcessInfo.processInfo.activeProcessorCount,
        _ body: (Int) -> Void
    ) {
        let helpers = min(threads, iterations) - 1
        guard helpers > 0 else {
            for i in 0..<iterations { body(i) }
            return
        }
        withoutActuallyEscaping(body) { body in
            let loop = Iterations(iterations: iterations, body: body)
            for _ in 0..<helpers {
                BlockingWork.start(named: "pinkeeper-loop") {
                    loop.take()
                    loop.lock.withLock { loop.finished += 1 }
                    loop.lock.signal()
                }
            }
            loop.take()
            loop.lock.withLock { while loop.finished < helpers { loop.lock.wait() } }
            // The helper threads' closures outlive this call; the body must not (it does not escape).
            loop.body = nil
        }
    }

    private final class Iterations: @unchecked Sendable {  // `finished` under `lock`; `body` read-only until all finish
        let iterations: Int
        let next = Atomic<Int>(0)
        /// Read by the helpers only until they report themselves finished.
        var body: ((Int) -> Void)?
        let lock = ConditionLock()
        var finished = 0  // guarded by `lock`

        init(iterations: Int, body: @escaping (Int) -> Void) {
            self.iterations = iterations
            self.body = body
        }

        func take() {
            guard let body else { return }
            while true {
                let i = next.add(1, ordering: .relaxed).oldValue
                guard i < iterations else { return }
                body(i)
            }
        }
    }
}
