// The fleet simulations: many hosts scheduled by the product's own NextUpdate and Backoff.
import PinKeeper
import PinKeeperDaemon

// MARK: - fleet: the scheduler of 10,000 hosts started in the same second

struct FleetResult {
    var total = 0
    var perMinute: [Int]
    func peak(_ range: Range<Int>) -> (Int, Int) {
        var best = (0, range.lowerBound)
        for m in range where perMinute[m] > best.0 { best = (perMinute[m], m) }
        return best
    }
    func mean(_ range: Range<Int>) -> Double { Double(perMinute[range].reduce(0, +)) / Double(range.count) }
}

/// Every host's first fetch is at start (no pins yet); each success schedules the next with
/// `schedule(now, isFirst)`. Requests are counted per minute at the pinning service.
func simulate(hosts: Int, minutes: Int, schedule: (_ now: Int64, _ catchingUp: Bool) -> Int64) -> FleetResult {
    var result = FleetResult(perMinute: Array(repeating: 0, count: minutes))
    let start: Int64 = 1_767_225_600
    let end = start + Int64(minutes) * 60
    for _ in 0..<hosts {
        var t = start
        var first = true
        while t < end {
            result.perMinute[Int((t - start) / 60)] += 1
            result.total += 1
            t = schedule(t, first)
            first = false
        }
    }
    return result
}

func fleet(_ args: Arguments) {
    let hosts = args.int("hosts", default: 10_000), hours = args.int("hours", default: 24)
    var policy = UpdatePolicy()
    policy.periodicUpdateInterval = Int64(args.int("interval", default: 3600))
    let minutes = hours * 60
    // Pins valid for a year: the interval is the periodic one.
    let pins = [Pin(name: "api.example.com", fingerprint: Array(repeating: 1, count: 32), expires: 1_767_225_600 + 365 * 86_400)]
    let system = SystemRandom()
    // The product as it is: every host's first update is a catch-up (nothing cached yet).
    let product = simulate(hosts: hosts, minutes: minutes) { t, catchingUp in
        NextUpdate.scheduled(pins: pins, now: t, policy: policy, random: system, catchingUp: catchingUp)
    }
    // Without the catch-up splay: the ≤ 10 % splay alone (the product before it had one).
    let noCatchUp = simulate(hosts: hosts, minutes: minutes) { t, _ in
        NextUpdate.scheduled(pins: pins, now: t, policy: policy, random: system)
    }
    // Recommended: after a catch-up, the next update is uniform in [0, the usual splayed
    // interval]. The phases then start uniform over one *mean* period, which the ≤ 10 % splay
    // keeps; uniform over the whole interval overlaps the first and second rounds near its end.
    let recommended = simulate(hosts: hosts, minutes: minutes) { t, catchingUp in
        let base = NextUpdate.interval(pins: pins, now: t, policy: policy)
        let floor = min(policy.retryMin, policy.periodicUpdateInterval)
        let regular = base - system.uniform(upTo: base / 10)
        return t + max(catchingUp ? system.uniform(upTo: regular) : regular, floor)
    }
    print(
        "fleet: \(hosts) hosts started in the same second, periodic_update_interval \(policy.periodicUpdateInterval) s"
            + ", \(hours) h simulated, requests per minute"
    )
    func report(_ name: String, _ r: FleetResult) {
        let all = 0..<minutes, afterStart = 1..<minutes, lastHalf = (minutes / 2)..<minutes
        let (peakAll, atAll) = r.peak(all), (peakAfter, atAfter) = r.peak(afterStart), (peakLate, atLate) = r.peak(lastHalf)
        print("  \(name): \(r.total) requests, mean \(fmt(r.mean(all))) per minute")
        line("    peak / mean, whole run", cFormat("%8.2f  (peak %ld at minute %ld)", Double(peakAll) / r.mean(all), peakAll, atAll))
        line(
            "    peak / mean, after the start minute",
            cFormat("%8.2f  (peak %ld at minute %ld)", Double(peakAfter) / r.mean(afterStart), peakAfter, atAfter))
        line(
            "    peak / mean, last \(hours / 2) h (goal <= 1.5)",
            cFormat("%8.2f  (peak %ld at minute %ld)", Double(peakLate) / r.mean(lastHalf), peakLate, atLate))
        var hourly: [String] = []
        for h in [1, 2, 6, 12, hours - 1] where h < hours {
            let range = (h * 60)..<((h + 1) * 60)
            hourly.append("h\(h) \(fmt(Double(r.peak(range).0) / r.mean(range), 2))")
        }
        line("    peak / mean within one hour", hourly.joined(separator: ", "))
    }
    report("product: NextUpdate.scheduled, catchingUp on the first update", product)
    report("no catch-up splay (splay <= 10 % only)", noCatchUp)
    report("recommended catch-up: next = now + U(0, interval - U(0, interval/10))", recommended)
}
