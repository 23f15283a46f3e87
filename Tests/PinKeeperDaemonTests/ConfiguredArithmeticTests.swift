import Foundation
import PinKeeper
import TestSupport
import Testing
@testable import PinKeeperDaemon

/// Every computation a configured number takes part in, fed the extremes an `UpdatePolicy` can
/// hold (tests and future code can build one without `check-config`): it saturates, never traps.
@Suite("Arithmetic on configured numbers")
struct ConfiguredArithmeticTests {
    struct Fixed: RandomSource {
        var fraction: Double
        func uniform(upTo upper: Int64) -> Int64 { upper <= 0 ? 0 : Int64(Double(upper) * fraction) }
    }

    static let extremes: [Int64] = [0, 1, 10, 365 * 86_400, Int64.max / 2, Int64.max / 2 + 1, Int64.max - 1, Int64.max]
    static let nows: [Int64] = [0, 1_750_000_000, Int64.max - 1, Int64.max]

    @Test func saturatingOperations() {
        #expect(Int64.max.saturatingAdding(1) == .max)
        #expect(Int64.min.saturatingAdding(-1) == .min)
        #expect(Int64(5).saturatingAdding(-7) == -2)
        #expect(Int64.min.saturatingSubtracting(1) == .min)
        #expect(Int64.max.saturatingSubtracting(-1) == .max)
        #expect(Int64(0).saturatingSubtracting(.min) == .max)
        #expect(Int64(3).saturatingSubtracting(5) == -2)
        #expect(Int64.max.saturatingMultiplied(by: 2) == .max)
        #expect(Int64.max.saturatingMultiplied(by: -2) == .min)
        #expect(Int64.min.saturatingMultiplied(by: -1) == .max)
        #expect(Int64(-4).saturatingMultiplied(by: 3) == -12)
    }

    static func policy(_ value: Int64) -> UpdatePolicy {
        var policy = UpdatePolicy()
        policy.periodicUpdateInterval = value
        policy.expirationUpdateThreshold = value
        policy.requestTimeout = value
        policy.retryMin = value
        policy.retryMax = value
        policy.hookTimeout = value
        policy.maxResponseSize = Int(value)
        return policy
    }

    @Test("next update, back-off, due time, health and the next probe saturate", arguments: extremes)
    func scheduleSaturates(_ value: Int64) {
        var policy = Self.policy(value)
        for retryMax in [value, Int64.max] {
            policy.retryMax = retryMax
            for now in Self.nows {
                let pins = [Pin(name: "a", fingerprint: [UInt8](repeating: 1, count: 32), expires: Int64.max)]
                for fraction in [0.0, 0.5, 1.0] {
                    let random = Fixed(fraction: fraction)
                    let next = NextUpdate.scheduled(pins: pins, now: now, policy: policy, random: random, catchingUp: fraction > 0)
                    #expect(next >= now)
                    for failures in [1, 2, 41, 64, Int.max] {
                        let retry = Backoff.retryAt(
                            now: now, failures: failures, policy: policy, retryAfter: .max,
                            regularUpdate: .max, random: random)
                        #expect(retry >= now)
                    }
                    #expect(ProbeRunner.nextProbe(now: now, interval: value, random: random) >= now)
                }
                var state = StoreState()
                state.retryAt = .max
                _ = DueTime.of(cache: nil, state: state, policy: policy, now: now)
                for lastSuccess in [Int64.min, 0, Int64.max] {
                    _ = StoreHealth.of(
                        validPins: 1, lastResult: .ok, lastSuccess: lastSuccess, now: now,
                        periodicUpdateInterval: value)
                }
            }
        }
    }

    @Test("request_timeout as libcurl limits and a handshake deadline saturate", arguments: extremes)
    func timeoutsSaturate(_ seconds: Int64) {
        let limits = CurlTransfer.timeLimits(seconds: seconds)
        #expect(limits.total >= 0 && limits.connect <= 10_000 && limits.lowSpeed <= 10)
        #expect(TLSConnect.deadline(start: TLSConnect.monotonicMilliseconds(), timeoutSeconds: Int(seconds)) > 0)
        #expect(CurlTransfer.timeLimits(seconds: 30) == (30_000, 10_000, 10))
    }

    /// `pinkeeper import` read the file with a buffer of `limit + 1` bytes: SIGILL at Int.max.
    @Test("an import's size limit at Int.max reads the file instead of trapping", arguments: [1, 2, 65_536, Int.max - 1, Int.max])
    func importLimit(_ limit: Int) throws {
        let file = TestEnvironment.temporaryDirectory("import-limit").appendingPathComponent("list.json")
        defer { try? FileManager.default.removeItem(at: file.deletingLastPathComponent()) }
        try Data("{}".utf8).write(to: file)
        if limit >= 2 {
            #expect(try OfflineList.read(file.path, limit: limit) == Data("{}".utf8))
        } else {
            #expect(throws: OfflineList.ReadError.self) { try OfflineList.read(file.path, limit: limit) }
        }
    }
}
