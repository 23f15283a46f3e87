/// Arithmetic that stops at `Int64.max` / `Int64.min` instead of trapping. `check-config` bounds
/// every configured number (`NumericKeys`), but the sums and products they take part in
/// (`now + interval`, `retry_min × 2ⁿ`, `timeout × 1000`) also meet values from files and the
/// clock, and an overflow there would kill the daemon: a saturated time is merely far away.
extension Int64 {
    func saturatingAdding(_ other: Int64) -> Int64 {
        let (sum, overflow) = addingReportingOverflow(other)
        return overflow ? (other > 0 ? .max : .min) : sum
    }

    func saturatingSubtracting(_ other: Int64) -> Int64 {
        let (difference, overflow) = subtractingReportingOverflow(other)
        return overflow ? (other < 0 ? .max : .min) : difference
    }

    func saturatingMultiplied(by other: Int64) -> Int64 {
        let (product, overflow) = multipliedReportingOverflow(by: other)
        return overflow ? ((self < 0) == (other < 0) ? .max : .min) : product
    }
}
