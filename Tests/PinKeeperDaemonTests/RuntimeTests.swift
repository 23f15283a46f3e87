import Foundation
import Glibc
import Synchronization
import Testing
@testable import PinKeeperDaemon

/// The daemon's own threads in place of libdispatch: the executor, the sleep, the parallel loop.
@Suite("Runtime without libdispatch")
struct RuntimeTests {
    static let pool = ThreadPoolExecutor(threads: 2, name: "pk-test-pool")

    private actor Tally {
        var count = 0
        func add(_ n: Int) { count += n }
    }

    @Test("tasks, nested task groups and actor hops run on the pool's threads")
    func runsJobs() async throws {
        let names = Shared<Set<String>>([])
        let total = await Task(executorPreference: Self.pool) {
            let tally = Tally()
            await withTaskGroup(of: Void.self) { group in
                for i in 0..<20 {
                    group.addTask {
                        let inner = await withTaskGroup(of: Int.self) { nested in
                            for j in 0..<5 {
                                nested.addTask {
                                    names.withLock { _ = $0.insert(Self.threadName()) }; return i * j
                                }
                            }
                            return await nested.reduce(0, +)
                        }
                        await tally.add(inner)
                    }
                }
            }
            return await tally.count
        }.value
        #expect(total == (0..<20).reduce(0) { $0 + $1 * 10 })
        #expect(names.withLock { $0 } == ["pk-test-pool"], "ran on \(names.withLock { $0 })")
    }

    @Test("a continuation resumed from a foreign thread continues on the pool")
    func foreignResume() async throws {
        let name = await Task(executorPreference: Self.pool) {
            let value: Int = await withCheckedContinuation { continuation in
                BlockingWork.start(named: "foreign") {
                    usleep(20_000); continuation.resume(returning: 42)
                }
            }
            return "\(value) \(Self.threadName())"
        }.value
        #expect(name == "42 pk-test-pool")
    }

    @Test("runBlocking returns the value or rethrows the error, from a thread outside the pool")
    func runBlocking() throws {
        struct Failure: Error, Equatable {}
        #expect(
            try Self.pool.runBlocking {
                try await ThreadSleep.sleep(for: .milliseconds(5)); return 7
            } == 7)
        #expect(throws: Failure()) { try Self.pool.runBlocking { () async throws -> Int in throw Failure() } }
    }

    // Timing is measured on the test's own pool: the tests around may block the default
    // executor's threads for seconds, which would delay any resumption there.
    @Test("the sleep wakes on time, on the sleeper's own executor", arguments: [false, true])
    func sleepsOnTime(onPool: Bool) async throws {
        let (elapsed, name) = try await Task(executorPreference: onPool ? Self.pool : nil) {
            let start = ContinuousClock.now
            try await ThreadSleep.sleep(for: .milliseconds(200))
            return (ContinuousClock.now - start, Self.threadName())
        }.value
        #expect(elapsed >= .milliseconds(200), "slept \(elapsed)")
        if onPool { #expect(elapsed < .milliseconds(700), "slept \(elapsed)") }
        #expect((name == "pk-test-pool") == onPool, "resumed on \(name)")
    }

    @Test("earlier deadlines wake first, whatever the order they were set in")
    func sleepsInDeadlineOrder() async throws {
        let order = Shared<[Int]>([])
        try await withThrowingTaskGroup(of: Void.self) { group in
            for ms in [600, 200, 400] {
                group.addTask(executorPreference: Self.pool) {
                    try await ThreadSleep.sleep(for: .milliseconds(ms))
                    order.withLock { $0.append(ms) }
                }
            }
            try await group.waitForAll()
        }
        #expect(order.withLock { $0 } == [200, 400, 600])
    }

    @Test("cancelling the task ends the sleep at once, also when cancelled before it began")
    func cancellation() async throws {
        let sleeper = Task(executorPreference: Self.pool) {
            let result = await Result { try await ThreadSleep.sleep(for: .seconds(60)) }
            return (ContinuousClock.now, result)
        }
        // Cancelled from a thread of its own: the default executor may be busy with other tests.
        let cancelled = Shared<ContinuousClock.Instant?>(nil)
        BlockingWork.start(named: "pk-canceller") {
            usleep(50_000)
            cancelled.withLock { $0 = .now }
            sleeper.cancel()
        }
        let (woke, result) = await sleeper.value
        let delay = cancelled.withLock { $0 }.map { woke - $0 }
        #expect(delay.map { $0 < .seconds(1) } == true, "woke \(String(describing: delay)) after the cancellation")
        #expect(throws: CancellationError.self) { try result.get() }

        let early = Task(executorPreference: Self.pool) {
            withUnsafeCurrentTask { $0?.cancel() }
            let start = ContinuousClock.now
            let result = await Result { try await ThreadSleep.sleep(for: .seconds(60)) }
            return (ContinuousClock.now - start, result)
        }
        let (earlyElapsed, earlyResult) = await early.value
        #expect(earlyElapsed < .seconds(1))
        #expect(throws: CancellationError.self) { try earlyResult.get() }
    }

    @Test("a sleep set while the timer waits for a later deadline wakes at its own, earlier time")
    func earlierSleepRearmsTheTimer() async throws {
        let late = Task(executorPreference: Self.pool) { try await ThreadSleep.sleep(for: .seconds(5)) }
        defer { late.cancel() }
        let elapsed = try await Task(executorPreference: Self.pool) {
            try await ThreadSleep.sleep(for: .milliseconds(100))  // meanwhile the timer is set for `late`
            let start = ContinuousClock.now
            try await ThreadSleep.sleep(for: .milliseconds(200))
            return ContinuousClock.now - start
        }.value
        #expect(elapsed >= .milliseconds(200) && elapsed < .seconds(2), "slept \(elapsed)")
    }

    @Test("deadlines count CLOCK_BOOTTIME, which goes on while the machine is suspended")
    func deadlinesCountBootTime() throws {
        func bootTime() -> Int64 {
            var time = timespec()
            clock_gettime(CLOCK_BOOTTIME, &time)
            return Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec)
        }
        let before = bootTime()
        let now = BootTime.now
        let after = bootTime()
        #expect(before <= now && now <= after, "\(before) \(now) \(after)")
        let second = BootTime.after(.seconds(1)) - BootTime.now
        #expect(second > 900_000_000 && second <= 1_000_000_000, "\(second)")
        #expect(BootTime.after(.seconds(Int64.max)) > BootTime.now, "saturates instead of overflowing")
    }

    @Test("the timer thread waits on a timerfd of CLOCK_BOOTTIME, armed while someone sleeps")
    func timerIsBootTimeTimerfd() async throws {
        // An hour: this test's own awaits run on the cooperative pool, which synchronous suites
        // have held for over a minute in CI; a shorter sleep could end before it is looked at.
        let sleeper = Task(executorPreference: Self.pool) { try await ThreadSleep.sleep(for: .seconds(3600)) }
        defer { sleeper.cancel() }
        // The kernel's view of the timer: "clockid: 7" and the time left, "it_value: (3599, 999000000)".
        let timerFD = try TimerThread.shared.get().timer.timerFD
        func timer() -> (clock: Int32?, left: Duration?) {
            let info = (try? String(contentsOfFile: "/proc/self/fdinfo/\(timerFD)", encoding: .utf8)) ?? ""
            var fields: [String: String] = [:]
            for line in info.split(separator: "\n") {
                let parts = line.split(separator: ":", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
                if parts.count == 2 { fields[parts[0]] = parts[1] }
            }
            let numbers = (fields["it_value"] ?? "").trimmingCharacters(in: CharacterSet(charactersIn: "()"))
                .split(separator: ",").compactMap { Int64($0.trimmingCharacters(in: .whitespaces)) }
            return (
                fields["clockid"].flatMap { Int32($0) },
                numbers.count == 2 ? .seconds(numbers[0]) + .nanoseconds(numbers[1]) : nil
            )
        }
        // Other tests' shorter sleeps may come first (the timer is set for the earliest deadline),
        // and a timer that just fired reads as disarmed until the thread has set the next one.
        // Until the sleeper has started, others' longer sleeps set it: on a loaded machine its
        // pool may take seconds to run it, so the wait is bounded by time, not by a count.
        let armed = { (left: Duration?) in left.map { $0 > .zero && $0 <= .seconds(3600) } == true }
        var found = timer()
        let deadline = ContinuousClock.now + .seconds(15)
        while !armed(found.left) && ContinuousClock.now < deadline {
            try await ThreadSleep.sleep(for: .milliseconds(10))
            found = timer()
        }
        #expect(found.clock == CLOCK_BOOTTIME, "\(found)")
        #expect(armed(found.left), "\(found)")
    }

    @Test("the parallel loop runs every iteration exactly once, on several threads")
    func parallelLoop() {
        let seen = Shared<[Int: Int]>([:])
        let threads = Shared<Set<pthread_t>>([])
        ParallelLoop.run(iterations: 500, threads: 4) { i in
            seen.withLock { $0[i, default: 0] += 1 }
            threads.withLock { _ = $0.insert(pthread_self()) }
            usleep(100)
        }
        #expect(seen.withLock { $0 } == Dictionary(uniqueKeysWithValues: (0..<500).map { ($0, 1) }))
        #expect(threads.withLock { $0.count } > 1)
        var single = 0
        ParallelLoop.run(iterations: 1, threads: 4) { _ in single += 1 }
        #expect(single == 1)
    }

    @Test("the semaphore hands permits over in arrival order; a cancelled waiter leaves the queue without one", .timeLimit(.minutes(1)))
    func semaphore() async throws {
        let gate = AsyncSemaphore(permits: 1)
        #expect(await gate.acquire())
        let order = Shared<[String]>([])
        func waiter(_ name: String) -> Task<Bool, Never> {
            Task {
                let granted = await gate.acquire()
                order.withLock { $0.append(granted ? name : "\(name) cancelled") }
                return granted
            }
        }
        let first = waiter("first")
        try await Task.sleep(for: .milliseconds(100))  // queued in this order
        let cancelled = waiter("second")
        try await Task.sleep(for: .milliseconds(100))
        let third = waiter("third")
        try await Task.sleep(for: .milliseconds(100))
        cancelled.cancel()
        #expect(await cancelled.value == false)
        gate.release()
        #expect(await first.value)
        gate.release()
        #expect(await third.value)
        #expect(order.withLock { $0 } == ["second cancelled", "first", "third"])
        let late = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return await gate.acquire()
        }
        #expect(await late.value == false, "cancelled before it asked")
    }

    /// The kernel's name of the calling thread (what `top -H` shows).
    static func threadName() -> String {
        ((try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? "").trimmingCharacters(in: .newlines)
    }
}

/// A value that tasks and threads share (Mutex itself cannot be captured by escaping closures).
private final class Shared<Value: Sendable>: Sendable {
    private let mutex: Mutex<Value>
    init(_ value: Value) { mutex = Mutex(value) }
    func withLock<T>(_ body: (inout Value) -> T) -> T { mutex.withLock { body(&$0) } }
}

extension Result where Failure == any Error {
    init(catching body: () async throws -> Success) async {
        do { self = .success(try await body()) } catch { self = .failure(error) }
    }
}
