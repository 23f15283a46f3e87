import Foundation
import PinKeeper
import TestSupport
import Testing
@testable import PinKeeperDaemon

/// Every numeric key of the configuration has bounds that `check-config` enforces with one
/// exit-78 line, and no value of the whole Int64 range makes loading, or what the daemon then
/// computes from the accepted value, trap.
@Suite("Configuration: numeric bounds")
struct NumericBoundsTests {
    /// Where a key is written, what else it needs, and how to read its value back.
    struct Placement: Sendable, CustomTestStringConvertible {
        var key: NumericKey
        var testDescription: String { key.name }
        var topLevel: Bool { key.name == "concurrency" }

        /// `retry_min` and `retry_max` must stay in order, whatever the other's default.
        var companion: String {
            switch key.name {
            case "retry_min": "retry_max = \(NumericKeys.year)"
            case "retry_max": "retry_min = 1"
            default: ""
            }
        }

        func text(_ value: String, inDefaults: Bool) -> String {
            let line = "\(key.name) = \(value)"
            if topLevel { return line + "\n" + ConfigTests.store() }
            if inDefaults { return "[defaults]\n\(line)\n\(companion)\n" + ConfigTests.store() }
            return ConfigTests.store("banking", line + "\n" + companion)
        }

        func value(in config: Configuration) -> Int64? {
            guard let store = config.stores.first else { return nil }
            return switch key.name {
            case "periodic_update_interval": store.policy.periodicUpdateInterval
            case "expiration_update_threshold": store.policy.expirationUpdateThreshold
            case "request_timeout": store.policy.requestTimeout
            case "max_response_size": Int64(store.policy.maxResponseSize)
            case "retry_min": store.policy.retryMin
            case "retry_max": store.policy.retryMax
            case "hook_timeout": store.policy.hookTimeout
            case "probe_interval": store.probe.interval
            case "min_probe_refresh": store.probe.minRefresh
            case "concurrency": Int64(config.concurrency)
            default: nil
            }
        }
    }

    static let placements = NumericKeys.all.map(Placement.init)

    func load(_ placement: Placement, _ value: String, inDefaults: Bool = false) throws -> ConfigFixture.Loaded {
        try ConfigTests.load(placement.text(value, inDefaults: inDefaults))
    }

    func expectRefused(_ placement: Placement, _ value: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        for inDefaults in placement.topLevel ? [false] : [false, true] {
            let loaded = try load(placement, value, inDefaults: inDefaults)
            try ConfigTests.expectError(
                loaded, store: placement.topLevel || inDefaults ? nil : "banking", key: placement.key.name,
                placement.key.problem, sourceLocation: sourceLocation)
        }
    }

    /// A key accepts an integer exactly when it is one of `NumericKeys.all`: a numeric key
    /// added without bounds fails here.
    @Test("every key that takes a number is a NumericKey")
    func everyNumericKeyIsListed() throws {
        let bounded = Set(NumericKeys.all.map(\.name))
        // 30 is inside every numeric key's range and keeps retry_max >= the default retry_min.
        for key in ConfigLoader.topLevelKeys + PolicyKeys.all + ProbeKeys.all {
            let text =
                ConfigLoader.topLevelKeys.contains(key)
                ? "\(key) = 30\n" + ConfigTests.store()
                : ConfigTests.store("banking", "\(key) = 30")
            let accepted = (try ConfigTests.load(text)).error == nil
            #expect(accepted == bounded.contains(key), "\(key) = 30 was \(accepted ? "accepted" : "refused")")
        }
    }

    @Test(
        "the documented bounds",
        arguments: [
            ("periodic_update_interval", "must be a duration from 1s to 365d"),
            ("expiration_update_threshold", "must be a duration from 0s to 365d"),
            ("request_timeout", "must be a duration from 1s to 1h"),
            ("max_response_size", "must be a size from 1B to 32MiB"),
            ("retry_min", "must be a duration from 1s to 365d"),
            ("retry_max", "must be a duration from 1s to 365d"),
            ("hook_timeout", "must be a duration from 1s to 10m"),
            ("probe_interval", "must be a duration from 10s to 365d"),
            ("min_probe_refresh", "must be a duration from 10s to 1d"),
            ("concurrency", "must be an integer from 1 to 64"),
        ])
    func documentedBounds(_ name: String, _ message: String) throws {
        let key = try #require(NumericKeys.all.first { $0.name == name })
        #expect(key.problem.hasPrefix(message), "\(key.problem)")
    }

    @Test("values at the bounds are accepted, as integers and in the largest unit", arguments: placements)
    func boundsAccepted(_ placement: Placement) throws {
        let range = placement.key.range
        for bound in [range.lowerBound, range.upperBound] {
            var forms = ["\(bound)"]
            switch placement.key.kind {
            case .duration: forms.append("\"\(Units.written(seconds: bound))\"")
            case .size: forms.append("\"\(Units.written(bytes: bound))\"")
            case .integer: break
            }
            for form in forms {
                for inDefaults in placement.topLevel ? [false] : [false, true] {
                    let loaded = try load(placement, form, inDefaults: inDefaults)
                    #expect(loaded.error == nil, "\(placement.key.name) = \(form): \(loaded.error.map { "\($0)" } ?? "")")
                    if let config = try? loaded.config() { #expect(placement.value(in: config) == bound) }
                }
            }
        }
    }

    @Test(
        "bound + 1, bound - 1, negatives, Int64's extremes and overlong unit strings are refused in one line",
        arguments: placements)
    func outOfRangeRefused(_ placement: Placement) throws {
        let range = placement.key.range
        var values = ["\(range.upperBound + 1)", "\(range.lowerBound - 1)", "-1", "\(Int64.max)", "\(Int64.min)"]
        switch placement.key.kind {
        case .duration:
            values += ["\"\(range.upperBound + 1)s\"", "\"9223372036854775807w\"", "\"99999999999999999999999s\"", "\"-5s\""]
        case .size:
            values += ["\"1025MiB\"", "\"9223372036854775807GiB\"", "\"99999999999999999999999B\""]
        case .integer:
            values += ["\"10\""]  // a plain integer only
        }
        for value in values { try expectRefused(placement, value) }
    }

    /// For each key, values from the whole Int64 range (uniform bits, small numbers, near the
    /// bounds), as integers or strings with a unit: loading ends in a configuration or a
    /// ConfigError, never a trap, and an accepted value is in range and goes through every
    /// computation the daemon makes with it. In a child process, so that a trap fails the test
    /// instead of ending the test run.
    @Test("random values over the whole Int64 range: loading and the schedule never trap")
    func randomValuesNeverTrap() async {
        await #expect(processExitsWith: .success) {
            try NumericFuzz.run(seed: 0x5EED_B0D5, valuesPerKey: 48)
        }
    }

    /// `pinkeeper import` died with SIGILL (arithmetic overflow reading the file) at this value.
    @Test("import and check-config with max_response_size = Int64.max: exit 78 and one line, no crash")
    func importRegression() throws {
        let sandbox = try Sandbox()
        let config = try sandbox.writeConfig(
            [("s", "https://127.0.0.1:1/s", "static")],
            storeExtra: "max_response_size = 9223372036854775807")
        let list = sandbox.root.appendingPathComponent("list.json")
        try Data(#"{"fingerprints":[]}"#.utf8).write(to: list)
        for arguments in [["import", "--config", config, "--store", "s", list.path], ["check-config", "--config", config]] {
            let result = ChildProcess.run(TestEnvironment.binary, arguments, timeout: 30)
            #expect(result.status == 78, "\(arguments[0]): \(result.status) \(result.stderr)")
            #expect(result.stderr == "pinkeeper: \(config): store 's': key 'max_response_size': \(NumericKeys.maxResponseSize.problem)\n")
        }
        #expect(sandbox.cacheBytes("s") == nil)
    }
}

/// The random walk of `randomValuesNeverTrap`, run in the child process; a broken promise is a
/// precondition failure there, which the exit test reports.
enum NumericFuzz {
    struct Random: RandomSource {
        let fraction: Double
        func uniform(upTo upper: Int64) -> Int64 { upper <= 0 ? 0 : Int64(Double(upper) * fraction) }
    }

    static func run(seed: UInt64, valuesPerKey: Int) throws {
        var generator = SplitMix64(seed: seed)
        for placement in NumericBoundsTests.placements {
            for _ in 0..<valuesPerKey {
                let value = sample(placement.key.range, &generator)
                let text = written(value, kind: placement.key.kind, &generator)
                let inDefaults = !placement.topLevel && Bool.random(using: &generator)
                let loaded = try ConfigTests.load(placement.text(text, inDefaults: inDefaults))
                switch loaded.result {
                case .failure(let error):
                    precondition(!error.description.contains("\n"), "not one line: \(error)")
                case .success(let config):
                    let accepted = placement.value(in: config) ?? 0
                    precondition(placement.key.range.contains(accepted), "\(placement.key.name) = \(text) accepted as \(accepted)")
                    exercise(config, generator: &generator)
                }
            }
        }
    }

    /// A quarter each: any 64 bits, a small number, near the lower bound, near the upper bound.
    static func sample(_ range: ClosedRange<Int64>, _ generator: inout SplitMix64) -> Int64 {
        let offset = Int64.random(in: -3...3, using: &generator)
        switch Int.random(in: 0..<4, using: &generator) {
        case 0: return Int64(bitPattern: generator.next())
        case 1: return Int64.random(in: -100...100_000, using: &generator)
        case 2: return range.lowerBound.saturatingAdding(offset)
        default: return range.upperBound.saturatingAdding(offset)
        }
    }

    /// As a TOML integer, or (durations and sizes) as a string in a unit that divides it.
    static func written(_ value: Int64, kind: NumericKey.Kind, _ generator: inout SplitMix64) -> String {
        let units = kind == .duration ? Units.durations : kind == .size ? Units.sizes : []
        guard !units.isEmpty, Bool.random(using: &generator) else { return "\(value)" }
        let (suffix, factor) = units.randomElement(using: &generator)!
        return "\"\(value / factor)\(suffix)\""
    }

    /// What the daemon computes from a store's accepted policy: the schedule, back-off, due
    /// time, health, probe time, libcurl's and the handshake's timeouts, the hook's deadline and
    /// an import's size limit.
    static func exercise(_ config: Configuration, generator: inout SplitMix64) {
        let store = config.stores[0]
        let policy = store.policy
        let random = Random(fraction: Double.random(in: 0...1, using: &generator))
        for now in [Int64(0), 1_750_000_000, Int64.max] {
            let pins = [
                Pin(
                    name: "a", fingerprint: [UInt8](repeating: 1, count: 32),
                    expires: now.saturatingAdding(Int64.random(in: 1...Int64.max, using: &generator)))
            ]
            precondition(NextUpdate.scheduled(pins: pins, now: now, policy: policy, random: random, catchingUp: true) >= now)
            for failures in [1, 2, 30, 41, Int.max] {
                precondition(
                    Backoff.retryAt(
                        now: now, failures: failures, policy: policy, retryAfter: .max,
                        regularUpdate: nil, random: random) >= now)
            }
            _ = DueTime.of(cache: nil, state: StoreState(), policy: policy, now: now)
            _ = StoreHealth.of(
                validPins: 1, lastResult: .ok, lastSuccess: 0, now: now,
                periodicUpdateInterval: policy.periodicUpdateInterval)
            precondition(ProbeRunner.nextProbe(now: now, interval: store.probe.interval, random: random) >= now)
        }
        let limits = CurlTransfer.timeLimits(seconds: policy.requestTimeout)
        precondition(limits.total == Int(policy.requestTimeout) * 1_000 && limits.connect <= 10_000)
        _ = TLSConnect.deadline(start: TLSConnect.monotonicMilliseconds(), timeoutSeconds: Int(policy.requestTimeout))
        _ = ContinuousClock.now + .seconds(policy.hookTimeout) + ChangeHooks.killGrace * 2
        precondition(policy.maxResponseSize < Int.max)
    }
}
