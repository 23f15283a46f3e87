/// When a burst of changes has settled: `quiet` after the last one, but no later than `longest`
/// after the first, so that a file rewritten without pause is still acted on.
struct Debounce {
    let quiet: Duration
    let longest: Duration
    private var first: ContinuousClock.Instant?
    private var last: ContinuousClock.Instant?

    init(quiet: Duration, longest: Duration) {
        self.quiet = quiet
        self.longest = longest
    }

    mutating func note(_ now: ContinuousClock.Instant) {
        if first == nil { first = now }
        last = now
    }

    /// Nil while nothing is pending.
    var deadline: ContinuousClock.Instant? {
        guard let first, let last else { return nil }
        return min(last + quiet, first + longest)
    }

    func isDue(_ now: ContinuousClock.Instant) -> Bool { deadline.map { now >= $0 } ?? false }

    /// Milliseconds to wait for the next event: -1 (no timeout) while nothing is pending,
    /// rounded up so that the wait never ends just before the deadline.
    func pollTimeout(_ now: ContinuousClock.Instant) -> Int32 {
        guard let deadline else { return -1 }
        let left = deadline - now
        guard left > .zero else { return 0 }
        let (seconds, attoseconds) = left.components
        return Int32(clamping: seconds * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000)
    }

    mutating func reset() { (first, last) = (nil, nil) }
}
