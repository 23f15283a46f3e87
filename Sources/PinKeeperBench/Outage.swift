// A fleet through an outage of its pinning service: every host is scheduled by the product's own
// code, as `StoreUpdater` does it. A success plans the next update with `NextUpdate.scheduled`
// (catching up when `NextUpdate.isCatchUp` says so); a failure plans a retry with
// `Backoff.retryAt` (never later than the planned update, as the daemon passes the published
// file's `nextUpdate`), given the `Retry-After` that `UpdateFailure(status:now:)` takes from the
// answer, as `ListExchange` does. Hosts are independent, so each one is run to the end on its own
// and its requests are counted per minute at the service.
import FoundationEssentials
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

/// What a host's request meets while the service is down.
enum OutageAnswer: CustomStringConvertible {
    /// No answer (refused, timed out): a failure without a hint.
    case unreachable
    /// `503 Service Unavailable` with `Retry-After: seconds`, from the service or its CDN.
    case unavailable(retryAfter: Int64)

    /// `unreachable`, or `503:SECONDS`.
    init?(_ text: String) {
        if text == "unreachable" {
            self = .unreachable
        } else if text.hasPrefix("503:"), let seconds = Int64(text.dropFirst(4)), seconds >= 0 {
            self = .unavailable(retryAfter: seconds)
        } else {
            return nil
        }
    }

    var description: String {
        switch self {
        case .unreachable: "unreachable"
        case .unavailable(let seconds): "503, Retry-After \(seconds) s"
        }
    }

    /// The `Retry-After` the daemon takes from this answer, through its own status check.
    var retryAfter: Int64? {
        guard case .unavailable(let seconds) = self else { return nil }
        let response = HTTPResponse(status: 503, headers: ["retry-after": "\(seconds)"], body: Data())
        return UpdateFailure(status: response, now: 0)?.retryAfter
    }
}

struct OutageSetup {
    var hosts = 1_000_000
    var policy = UpdatePolicy()
    var outageSeconds: Int64 = 6 * 3_600
    var answer = OutageAnswer.unreachable
    /// nil: the product's `Backoff`; otherwise a comparison, not the product: the part of each step
    /// that is random (1 = "full jitter"; the product's "equal jitter" is 1/2).
    var jitterShare: Double?
    var seed: UInt64 = 1
    var beforeSeconds: Int64 = 0
    var afterSeconds: Int64 = 0

    /// Recorded by default: a day (or two intervals) before the outage, the outage, as long again after it.
    mutating func recordDefaultWindows() {
        let window = max(24 * 3_600, 2 * policy.periodicUpdateInterval)
        if beforeSeconds == 0 { beforeSeconds = window }
        if afterSeconds == 0 { afterSeconds = window }
    }
}

struct OutageRun {
    var perMinute: [Int]
    /// For each host that failed at least once: seconds from the service's return to its first success.
    var recovery: [Int64] = []
}

/// One host from `warmUp` seconds before the recorded window to its end. The window is
/// `[0, minutes)`; the service fails every request in `[outageStart, outageEnd)` (seconds).
func runHost(
    _ run: inout OutageRun, setup: OutageSetup, retryAfter: Int64?, pins: [Pin], random: SplitMixRandom
) {
    let policy = setup.policy
    let epoch: Int64 = 1_767_225_600  // the window's start; pins stay valid throughout
    let end = epoch + Int64(run.perMinute.count) * 60
    let (outageStart, outageEnd) = (epoch + setup.beforeSeconds, epoch + setup.beforeSeconds + setup.outageSeconds)
    // A host that has run for a while: its next update is somewhere in one mean splayed interval
    // (95 % of the periodic one) from the start of the warm-up (ten intervals).
    let interval = policy.periodicUpdateInterval
    var planned = epoch - 10 * interval + random.uniform(upTo: interval - interval / 20)
    var attempt = planned
    var failures = 0
    var failedOnce = false
    var recovered = false
    while attempt < end {
        let now = attempt
        if now >= epoch { run.perMinute[Int((now - epoch) / 60)] += 1 }
        if now >= outageStart && now < outageEnd {
            failures += 1
            failedOnce = true
            attempt =
                if let share = setup.jitterShare {
                    comparisonRetry(now: now, failures: failures, policy: policy, share: share, random: random)
                } else {
                    Backoff.retryAt(
                        now: now, failures: failures, policy: policy, retryAfter: retryAfter, regularUpdate: planned,
                        random: random)
                }
        } else {
            if failedOnce && !recovered {
                recovered = true
                run.recovery.append(now - outageEnd)
            }
            let catchingUp = NextUpdate.isCatchUp(planned: planned, now: now, policy: policy)
            planned = NextUpdate.scheduled(pins: pins, now: now, policy: policy, random: random, catchingUp: catchingUp)
            failures = 0
            attempt = planned
        }
    }
    if failedOnce && !recovered { run.recovery.append(.max) }
}

/// For comparison only (`--jitter-share`), not the product: the same doubling step, with `share`
/// of it random instead of the upper half (1 is "full jitter"), never below `retry_min`.
func comparisonRetry(now: Int64, failures: Int, policy: UpdatePolicy, share: Double, random: any RandomSource) -> Int64 {
    let step = Backoff.retryAt(now: now, failures: failures, policy: policy, random: FixedTop()) - now
    return now + max(policy.retryMin, step - random.uniform(upTo: Int64(Double(step) * share)))
}

/// A generator that always returns 0: `Backoff.retryAt` then gives the whole step.
struct FixedTop: RandomSource {
    func uniform(upTo upper: Int64) -> Int64 { 0 }
}

func simulate(_ setup: OutageSetup) -> OutageRun {
    let minutes = Int((setup.beforeSeconds + setup.outageSeconds + setup.afterSeconds) / 60)
    let pins = [Pin(name: "api.example.com", fingerprint: Array(repeating: 1, count: 32), expires: 1_767_225_600 + 10 * 365 * 86_400)]
    let random = SplitMixRandom(seed: setup.seed)
    let retryAfter = setup.answer.retryAfter
    var run = OutageRun(perMinute: Array(repeating: 0, count: minutes))
    for _ in 0..<setup.hosts {
        runHost(&run, setup: setup, retryAfter: retryAfter, pins: pins, random: random)
    }
    return run
}

/// A rate's peak in one window, per minute and per 10 minutes, in units of the steady mean.
struct Peak {
    var minute: Double, minuteAt: Int
    var tenMinutes: Double, tenMinutesAt: Int
}

/// What the goal is judged on. Minutes count from the start of the outage.
struct OutageFigures {
    var steady: Double
    /// The steady window's own maximum: what noise alone makes of a peak at this request rate.
    var noise: Peak
    var during: Peak, after: Peak
    var affected: Int
    var hosts: Int
    /// Seconds from the return until 99 % of the fleet is fresh (0: at once; .max: never).
    var fleetP99: Int64
    /// Of the hosts that failed: p50, p99, max.
    var recovery: (Int64, Int64, Int64)

    init(_ run: OutageRun, _ setup: OutageSetup) {
        let counts = run.perMinute
        let before = Int(setup.beforeSeconds / 60), outage = Int(setup.outageSeconds / 60)
        let steady = Double(counts[0..<before].reduce(0, +)) / Double(before)
        func peak(_ range: Range<Int>, width: Int) -> (Double, Int) {
            var best = (0.0, range.lowerBound)
            guard range.count >= width else { return (0, 0) }  // a window shorter than the width (no outage)
            var sum = counts[range.lowerBound..<(range.lowerBound + width)].reduce(0, +)
            for index in range.lowerBound...(range.upperBound - width) {
                if index > range.lowerBound { sum += counts[index + width - 1] - counts[index - 1] }
                if Double(sum) > best.0 { best = (Double(sum), index) }
            }
            return (best.0 / Double(width) / steady, best.1 - before)
        }
        func peaks(_ range: Range<Int>) -> Peak {
            let (minute, minuteAt) = peak(range, width: 1), (ten, tenAt) = peak(range, width: 10)
            return Peak(minute: minute, minuteAt: minuteAt, tenMinutes: ten, tenMinutesAt: tenAt)
        }
        self.steady = steady
        noise = peaks(0..<before)
        during = peaks(before..<(before + outage))
        after = peaks((before + outage)..<counts.count)
        let recovery = run.recovery.sorted()
        let affected = recovery.count
        self.affected = affected
        hosts = setup.hosts
        func quantile(_ q: Double) -> Int64 { affected == 0 ? 0 : recovery[min(affected - 1, Int(Double(affected) * q))] }
        self.recovery = (quantile(0.5), quantile(0.99), quantile(1))
        // The fleet: hosts that never failed are fresh all along.
        let allowed = (setup.hosts + 99) / 100
        fleetP99 = affected <= allowed ? 0 : recovery[affected - allowed - 1]
    }
}

func seconds(_ value: Int64) -> String { value == .max ? "never" : cFormat("%ld s", value) }

func outageSetup(_ args: Arguments) -> OutageSetup {
    var setup = OutageSetup()
    setup.hosts = args.int("hosts", default: setup.hosts)
    setup.policy.periodicUpdateInterval = Int64(args.int("interval", default: 3_600))
    setup.policy.retryMin = Int64(args.int("retry-min", default: Int(setup.policy.retryMin)))
    setup.policy.retryMax = Int64(args.int("retry-max", default: Int(setup.policy.retryMax)))
    setup.outageSeconds = Int64(args.int("outage-hours", default: 6)) * 3_600
    setup.beforeSeconds = Int64(args.int("before-hours", default: 0)) * 3_600
    setup.afterSeconds = Int64(args.int("after-hours", default: 0)) * 3_600
    setup.recordDefaultWindows()
    setup.seed = UInt64(args.int("seed", default: 1))
    setup.jitterShare = args.double("jitter-share")
    let answer = args.string("answer", default: "unreachable")
    guard let parsed = OutageAnswer(answer) else { fail("--answer is unreachable or 503:SECONDS, not '\(answer)'") }
    setup.answer = parsed
    return setup
}

func outage(_ args: Arguments) {
    let setup = outageSetup(args)
    let run = simulate(setup)
    let figures = OutageFigures(run, setup)
    report(figures, setup)
    let csv = args.string("csv", default: "")
    if !csv.isEmpty {
        var text = "minute,requests\n"
        let before = Int(setup.beforeSeconds / 60)
        for (minute, count) in run.perMinute.enumerated() { text += "\(minute - before),\(count)\n" }
        guard let file = fopen(csv, "w") else { fail("cannot write \(csv)") }
        fputs(text, file)
        fclose(file)
    }
}

private func report(_ figures: OutageFigures, _ setup: OutageSetup) {
    let policy = setup.policy
    print(
        "outage: \(setup.hosts) hosts, periodic_update_interval \(policy.periodicUpdateInterval) s"
            + ", retry_min \(policy.retryMin) s, retry_max \(policy.retryMax) s"
            + ", service down \(setup.outageSeconds / 3_600) h (\(setup.answer)) after \(setup.beforeSeconds / 3_600) h"
    )
    if let share = setup.jitterShare {
        print(cFormat("(retries with %.2f of each step random, a comparison: not the product's Backoff)", share))
    }
    line("steady mean before the outage", cFormat("%.1f requests per minute", figures.steady))
    for (name, peak) in [
        ("steady window's own max / mean (noise)", figures.noise), ("peak / steady mean during", figures.during),
        ("peak / steady mean after (goal <= 3)", figures.after),
    ] {
        line(
            name,
            cFormat(
                "%6.2f per minute (minute %ld), %6.2f per 10 minutes (from minute %ld)", peak.minute, peak.minuteAt, peak.tenMinutes,
                peak.tenMinutesAt))
    }
    line(
        "hosts that failed at least once",
        cFormat("%ld (%.1f %%)", figures.affected, Double(figures.affected) * 100 / Double(figures.hosts)))
    guard figures.affected > 0 else { return }
    let (p50, p99, worst) = figures.recovery
    line("fresh again after the return: p50 / p99 / max", "\(seconds(p50)) / \(seconds(p99)) / \(seconds(worst))")
    line(
        "99 % of the fleet fresh after (goal <= 2 x retry_max = \(2 * policy.retryMax) s)",
        figures.fleetP99 == 0 ? "at once" : seconds(figures.fleetP99))
}

/// `outage-sweep`: the same outage for every answer × retry_min × retry_max, one table row each;
/// with several `--seeds`, each figure is the median over the seeds, and the peak after also its range.
func outageSweep(_ args: Arguments) {
    func list(_ name: String, _ fallback: String) -> [String] {
        args.string(name, default: fallback).split(separator: ",").map(String.init)
    }
    let answers = list("answers", "unreachable,503:3600").map { text in
        guard let answer = OutageAnswer(text) else { fail("--answers: unreachable or 503:SECONDS, not '\(text)'") }
        return answer
    }
    let mins = list("retry-mins", "30,300,900").compactMap { Int64($0) }
    let maxes = list("retry-maxes", "3600,7200,14400").compactMap { Int64($0) }
    let seeds = list("seeds", "1").compactMap { UInt64($0) }
    var base = outageSetup(args)
    if args.int("interval", default: 0) == 0 { base.policy.periodicUpdateInterval = 604_800 }
    base.beforeSeconds = 0
    base.afterSeconds = 0
    base.recordDefaultWindows()
    print(
        "outage-sweep: \(base.hosts) hosts, periodic_update_interval \(base.policy.periodicUpdateInterval) s"
            + ", service down \(base.outageSeconds / 3_600) h, seeds \(seeds.map(String.init).joined(separator: ","))"
            + "; peaks / steady mean, per minute; per 10 minutes (median over the seeds)"
    )
    print(
        "| answer during the outage | retry_min | retry_max | steady window's own max (noise)"
            + " | peak during | peak after (goal ≤ 3) | peak after, range over the seeds"
            + " | 99 % of the fleet fresh after (goal ≤ 2 × retry_max) |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for answer in answers {
        for retryMin in mins {
            for retryMax in maxes where retryMax >= retryMin {
                var setup = base
                setup.answer = answer
                setup.policy.retryMin = retryMin
                setup.policy.retryMax = retryMax
                let runs = seeds.map { seed in
                    setup.seed = seed
                    return OutageFigures(simulate(setup), setup)
                }
                func median<T: Comparable>(_ value: (OutageFigures) -> T) -> T { runs.map(value).sorted()[(runs.count - 1) / 2] }
                func pair(_ peak: (OutageFigures) -> Peak) -> String {
                    cFormat("%.2f; %.2f", median { peak($0).minute }, median { peak($0).tenMinutes })
                }
                let (afterMinute, afterTen) = (runs.map(\.after.minute), runs.map(\.after.tenMinutes))
                let range = cFormat(
                    "%.2f – %.2f; %.2f – %.2f", afterMinute.min()!, afterMinute.max()!, afterTen.min()!, afterTen.max()!)
                let met = median(\.after.tenMinutes) <= 3 && median(\.after.minute) <= 3 ? " ✔" : " ✘"
                let fresh = median(\.fleetP99)
                print(
                    "| \(answer) | \(retryMin) s | \(retryMax / 60) min | \(pair(\.noise)) | \(pair(\.during))"
                        + " | \(pair(\.after))\(met)"
                        + " | \(range) | \(seconds(fresh)) / \(2 * retryMax) s\(fresh <= 2 * retryMax ? " ✔" : " ✘") |"
                )
                fflush(nil)  // each row as it comes: the sweep takes minutes
            }
        }
    }
}
