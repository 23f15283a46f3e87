// A fleet through an outage of its pinning service: every host is scheduled by the product's own
// code, as `StoreUpdater` does it. A success plans the next update with `NextUpdate.scheduled`
// (catching up when `NextUpdate.isCatchUp` says so); a failure plans a retry with
// `Backoff.retryAt` (never later than the planned update, as the daemon passes the published
// file's `nextUpdate`). Hosts are independent, so each one is run to the end on its own and its
// requests are counted per minute at the service.
import Glibc
import PinKeeper
import PinKeeperDaemon

/// A fast, seeded generator, so that a run can be repeated; the scheduling code is the product's.
final class SplitMixRandom: RandomSource, @unchecked Sendable {  // one thread per instance
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    func uniform(upTo upper: Int64) -> Int64 {
        upper <= 0 ? 0 : Int64(next() % (UInt64(upper) + 1))
    }
}

struct OutageRun {
    var perMinute: [Int]
    /// For each host that failed at least once: seconds from the service's return to its first success.
    var recovery: [Int64] = []
    var hosts = 0
}

/// One host from `warmUp` seconds before the recorded window to its end. The window is
/// `[0, minutes)`; the service fails every request in `[outageStart, outageEnd)` (seconds).
func runHost(
    _ run: inout OutageRun, policy: UpdatePolicy, pins: [Pin], random: SplitMixRandom,
    warmUp: Int64, outageStart: Int64, outageEnd: Int64, fullJitter: Bool
) {
    let epoch: Int64 = 1_767_225_600  // the window's start; pins stay valid throughout
    let end = epoch + Int64(run.perMinute.count) * 60
    // A host that has run for a while: its next update is somewhere in one mean splayed interval
    // (95 % of the periodic one) from the start of the warm-up (ten intervals).
    var planned = epoch - warmUp + random.uniform(upTo: policy.periodicUpdateInterval - policy.periodicUpdateInterval / 20)
    var attempt = planned
    var failures = 0
    var failedOnce = false
    var recovered = false
    while attempt < end {
        let now = attempt
        if now >= epoch { run.perMinute[Int((now - epoch) / 60)] += 1 }
        let down = now >= epoch + outageStart && now < epoch + outageEnd
        if down {
            failures += 1
            failedOnce = true
            attempt =
                fullJitter
                ? fullJitterRetry(now: now, failures: failures, policy: policy, random: random)
                : Backoff.retryAt(now: now, failures: failures, policy: policy, regularUpdate: planned, random: random)
        } else {
            if failedOnce && !recovered {
                recovered = true
                run.recovery.append(now - (epoch + outageEnd))
            }
            let catchingUp = NextUpdate.isCatchUp(planned: planned, now: now, policy: policy)
            planned = NextUpdate.scheduled(pins: pins, now: now, policy: policy, random: random, catchingUp: catchingUp)
            failures = 0
            attempt = planned
        }
    }
    if failedOnce && !recovered { run.recovery.append(.max) }
}

/// For comparison only (`--jitter full`), not the product: the same doubling step, the delay
/// uniform over all of it ("full jitter") instead of its upper half.
func fullJitterRetry(now: Int64, failures: Int, policy: UpdatePolicy, random: RandomSource) -> Int64 {
    let upper = Backoff.retryAt(now: now, failures: failures, policy: policy, random: FixedTop()) - now
    return now + max(policy.retryMin, random.uniform(upTo: upper))
}

/// A generator that always returns 0: `Backoff.retryAt` then gives the whole step.
struct FixedTop: RandomSource {
    func uniform(upTo upper: Int64) -> Int64 { 0 }
}

func outage(_ args: Arguments) {
    let hosts = args.int("hosts", default: 1_000_000)
    var policy = UpdatePolicy()
    policy.periodicUpdateInterval = Int64(args.int("interval", default: 3_600))
    policy.retryMin = Int64(args.int("retry-min", default: Int(policy.retryMin)))
    policy.retryMax = Int64(args.int("retry-max", default: Int(policy.retryMax)))
    let interval = policy.periodicUpdateInterval
    let outageSeconds = Int64(args.int("outage-hours", default: 6)) * 3_600
    // Recorded: a day (or two intervals) before the outage, the outage, then as long again after it.
    let before = Int64(args.int("before-hours", default: Int(max(24 * 3_600, 2 * interval) / 3_600))) * 3_600
    let after = Int64(args.int("after-hours", default: Int(max(24 * 3_600, 2 * interval) / 3_600))) * 3_600
    let minutes = Int((before + outageSeconds + after) / 60)
    let pins = [Pin(name: "api.example.com", fingerprint: Array(repeating: 1, count: 32), expires: 1_767_225_600 + 10 * 365 * 86_400)]
    let random = SplitMixRandom(seed: UInt64(args.int("seed", default: 1)))
    let fullJitter = args.string("jitter", default: "product") == "full"
    var run = OutageRun(perMinute: Array(repeating: 0, count: minutes), hosts: hosts)
    for _ in 0..<hosts {
        runHost(&run, policy: policy, pins: pins, random: random, warmUp: 10 * interval, outageStart: before, outageEnd: before + outageSeconds, fullJitter: fullJitter)
    }
    if fullJitter { print("(retries with full jitter, a comparison: not the product's Backoff)") }
    report(run, policy: policy, before: Int(before / 60), outage: Int(outageSeconds / 60))
    let csv = args.string("csv", default: "")
    if !csv.isEmpty {
        var text = "minute,requests\n"
        for (minute, count) in run.perMinute.enumerated() { text += "\(minute - Int(before / 60)),\(count)\n" }
        guard let file = fopen(csv, "w") else { fail("cannot write \(csv)") }
        fputs(text, file)
        fclose(file)
    }
}

private func report(_ run: OutageRun, policy: UpdatePolicy, before: Int, outage: Int) {
    let counts = run.perMinute
    let steady = Double(counts[0..<before].reduce(0, +)) / Double(before)
    func peak(_ range: Range<Int>, width: Int = 1) -> (Double, Int) {
        var best = (0.0, range.lowerBound)
        var index = range.lowerBound
        while index + width <= range.upperBound {
            let rate = Double(counts[index..<(index + width)].reduce(0, +)) / Double(width)
            if rate > best.0 { best = (rate, index) }
            index += 1
        }
        return best
    }
    let during = before..<(before + outage), afterwards = (before + outage)..<counts.count
    print(
        "outage: \(run.hosts) hosts, periodic_update_interval \(policy.periodicUpdateInterval) s, retry_min \(policy.retryMin) s, retry_max \(policy.retryMax) s, service down \(outage / 60) h after \(before / 60) h"
    )
    line("steady mean before the outage", cFormat("%.1f requests per minute", steady))
    for (name, range) in [("before", 0..<before), ("during", during), ("after", afterwards)] {
        let (minute, at) = peak(range), (ten, atTen) = peak(range, width: 10)
        line(
            "peak / steady mean \(name) (goal <= 3)",
            cFormat("%6.2f per minute (minute %ld), %6.2f per 10 minutes (from minute %ld)", minute / steady, at - before, ten / steady, atTen - before))
    }
    let recovery = run.recovery.sorted()
    let affected = recovery.count
    line("hosts that failed at least once", cFormat("%ld (%.1f %%)", affected, Double(affected) * 100 / Double(run.hosts)))
    guard affected > 0 else { return }
    func quantile(_ q: Double) -> String {
        let value = recovery[min(affected - 1, Int(Double(affected) * q))]
        return value == .max ? "never" : cFormat("%ld s", value)
    }
    line("fresh again after the return: p50 / p99 / max", "\(quantile(0.5)) / \(quantile(0.99)) / \(quantile(1))")
    // The fleet: hosts that never failed are fresh all along.
    let allowed = (run.hosts + 99) / 100
    let fleetP99 = affected <= allowed ? "at once" : cFormat("%ld s", recovery[affected - allowed - 1])
    line("99 % of the fleet fresh after (goal <= 2 x retry_max = \(2 * policy.retryMax) s)", fleetP99)
}
