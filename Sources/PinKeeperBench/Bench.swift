// pinkeeper-bench: the daemon's measured costs (docs/performance.md `## Daemon`).
// scripts/bench.sh builds it in release mode, makes the inputs and runs every subcommand;
// each subcommand can also be run alone:
//
//   static     --list FILE --public-key B64 [--openssl-verify-per-sec N] [--runs N]
//   unchanged  --list FILE --public-key B64 [--runs N]
//   challenge  --body FILE --challenge TEXT --signature B64 --public-key B64 [--runs N]
//   stores     --base-url URL --ca FILE --public-key B64 [--count 100] [--mode challenge|static] [--runs N]
//   http-list  --url URL --ca FILE --public-key B64 [--mode challenge|static] [--runs N]
//   verify     --list FILE --public-key B64 [--runs N]   (contexts per call vs contexts reused, as PinMerger now verifies)
//   fleet      [--hosts 10000] [--hours 24] [--interval 3600]
//   outage     [--hosts 1000000] [--interval 3600] [--outage-hours 6] [--retry-min S] [--retry-max S]
//              [--before-hours H] [--after-hours H] [--answer unreachable|503:SECONDS] [--seed N]
//              [--jitter-share F] [--csv FILE] (Outage.swift)
//   outage-sweep [--hosts N] [--interval 604800] [--outage-hours 6] [--seeds 1,2,3]
//              [--answers unreachable,503:3600] [--retry-mins 30,300,900] [--retry-maxes 3600,7200,14400]:
//              a table row per combination, its windows the default ones (Outage.swift)
//
// Everything runs the product code in-process (PinList, PinMerger, CacheDirectory, StoreUpdater,
// UpdatePass, CurlFetcher, NextUpdate); only the inputs are made outside (Python `cryptography`).
import CLibcrypto
import Dispatch
import FoundationEssentials
import Glibc
import Logging
import PinKeeper
import PinKeeperDaemon

// MARK: - Small tools

struct Arguments {
    let command: String
    private let values: [String: String]

    init(_ argv: [String]) {
        command = argv.first ?? "help"
        var values: [String: String] = [:]
        var rest = argv.dropFirst()
        while let name = rest.popFirst() {
            guard name.hasPrefix("--"), let value = rest.popFirst() else { fail("unexpected argument '\(name)'") }
            values[String(name.dropFirst(2))] = value
        }
        self.values = values
    }

    func string(_ name: String) -> String {
        guard let value = values[name] else { fail("\(command) needs --\(name)") }
        return value
    }

    func string(_ name: String, default value: String) -> String { values[name] ?? value }
    func int(_ name: String, default value: Int) -> Int { values[name].flatMap(Int.init) ?? value }
    func double(_ name: String) -> Double? { values[name].flatMap(Double.init) }
}

func fail(_ message: String) -> Never {
    StandardError.write("pinkeeper-bench: \(message)\n")
    exit(2)
}

/// The benchmark's inputs are its own: a failure is a broken set-up, reported and fatal.
func must<T>(_ body: () throws -> T) -> T {
    do { return try body() } catch { fail("\(error)") }
}

func read(_ path: String) -> Data {
    guard let data = FileManager.default.contents(atPath: path) else { fail("cannot read \(path)") }
    return data
}

func key(_ base64: String) -> PublicKey {
    do { return try PublicKey(base64: base64) } catch { fail("public key \(error.reason)") }
}

extension Duration {
    var ms: Double { Double(components.seconds) * 1e3 + Double(components.attoseconds) / 1e15 }
}

func time<T>(_ body: () throws -> T) rethrows -> (T, Double) {
    let start = ContinuousClock.now
    let value = try body()
    return (value, (ContinuousClock.now - start).ms)
}

func time<T>(_ body: () async throws -> T) async rethrows -> (T, Double) {
    let start = ContinuousClock.now
    let value = try await body()
    return (value, (ContinuousClock.now - start).ms)
}

/// Median and minimum of repeated timings, in milliseconds.
struct Sample {
    var values: [Double] = []
    mutating func add(_ value: Double) { values.append(value) }
    var median: Double {
        let sorted = values.sorted()
        guard !sorted.isEmpty else { return .nan }
        return sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
    }
    var min: Double { values.min() ?? .nan }
    var text: String { cFormat("median %8.1f ms  (min %.1f, n=%ld)", median, min, values.count) }
}

func line(_ label: String, _ text: String) { print("  \(label.padded(to: 44)) \(text)") }
func fmt(_ value: Double, _ digits: Int = 1) -> String { cFormat("%.\(digits)f", value) }

/// A fresh directory under $TMPDIR (or /tmp), removed at the end of the command.
final class Scratch {
    let root: String
    private var counter = 0

    init(_ label: String) {
        let base = ProcessInfo.processInfo.environment["TMPDIR"] ?? "/tmp"
        root = "\(base)/pinkeeper-bench-\(label)-\(getpid())"
        try? FileManager.default.removeItem(atPath: root)
        try? FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
    }

    func directory() -> String {
        counter += 1
        let path = "\(root)/\(counter)"
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        return path
    }

    deinit { try? FileManager.default.removeItem(atPath: root) }
}

enum Shared {
    static let quietLogger = Logger(label: "pinkeeper-bench") { _ in SwiftLogNoOpLogHandler() }
    static let now = SystemClock().now()
    /// Lists of 10,000 entries are larger than the default max_response_size (1 MiB).
    static let bigPolicy: UpdatePolicy = {
        var policy = UpdatePolicy()
        policy.maxResponseSize = 64 << 20
        return policy
    }()
}

/// Serves one canned response; a request carrying the ETag it gave gets 304.
struct CannedFetcher: HTTPFetching {
    var status = 200
    var headers: [String: String] = [:]
    var body: Data

    func fetch(_ request: HTTPRequest) async throws(UpdateFailure) -> HTTPResponse {
        if let etag = headers["etag"], request.headers.contains("If-None-Match: \(etag)") {
            return HTTPResponse(status: 304, headers: headers, body: Data())
        }
        return HTTPResponse(status: status, headers: headers, body: body)
    }
}

func updater(_ fetcher: any HTTPFetching, _ scratch: Scratch) -> StoreUpdater {
    StoreUpdater(
        fetcher: fetcher, cache: CacheDirectory(path: scratch.directory()),
        state: StateDirectory(path: scratch.directory()), logger: Shared.quietLogger)
}

// MARK: - static: 10,000 entries signed per entry

func staticList(_ args: Arguments) async {
    let data = read(args.string("list"))
    let verifier = SignatureVerifier(keys: [key(args.string("public-key"))])
    let runs = args.int("runs", default: 5)
    let scratch = Scratch("static")
    let merger = PinMerger(mode: .static, verifier: verifier)
    var parse = Sample(), merge = Sample(), publish = Sample(), total = Sample()
    var entries = 0
    for _ in 0..<runs {
        let cache = CacheDirectory(path: scratch.directory())
        let start = ContinuousClock.now
        let (list, tParse) = time { must { try PinList(json: data) } }
        let (outcome, tMerge) = time { () -> PinMerger.Outcome in
            do { return try merger.merge(cached: [], received: list, now: Shared.now) } catch { fail("merge: \(error)") }
        }
        let file = CacheFile(
            list: PinList(pins: outcome.pins, domainsConfig: outcome.domainsConfig),
            metadata: .init(store: "bench", source: "https://127.0.0.1/bench", updated: Shared.now, nextUpdate: Shared.now + 3600))
        let (_, tPublish) = time { must { try cache.publish(file) } }
        total.add((ContinuousClock.now - start).ms)
        parse.add(tParse); merge.add(tMerge); publish.add(tPublish)
        entries = outcome.added
    }
    let list = must { try PinList(json: data) }
    let (_, sequential) = time { for pin in list.pins where !verifier.verifyEntry(pin) { fail("entry does not verify") } }

    var e2e = Sample()
    let fetcher = CannedFetcher(headers: ["etag": "\"bench\""], body: data)
    let store = StoreConfig(id: "bench", url: "https://127.0.0.1/bench", publicKeys: verifier.keys, mode: .static, policy: Shared.bigPolicy)
    for _ in 0..<runs {
        let u = updater(fetcher, scratch)
        let (report, t) = await time { await u.update(store) }
        guard report.result == .ok, report.pins == entries else { fail("update: \(report)") }
        e2e.add(t)
    }

    print("static list: \(entries) entries, \(data.count) bytes, signed per entry; \(ProcessInfo.processInfo.activeProcessorCount) cores")
    line("parse (PinList(json:))", parse.text)
    line("verify + merge (PinMerger, all cores)", merge.text)
    line("publish (CacheDirectory.publish, fsync)", publish.text)
    line("verify + merge + publish (incl. parse)", total.text)
    line("StoreUpdater.update, canned 200 response", e2e.text)
    line(
        "reference: same verifications on 1 thread",
        cFormat("%8.1f ms  (%.1f µs per entry)", sequential, sequential * 1000 / Double(entries)))
    line("parallel speed-up of verification", cFormat("%8.2f×", sequential / merge.median))
    if let rate = args.double("openssl-verify-per-sec") {
        let reference = Double(entries) / rate * 1000
        line("openssl speed ecdsap256: \(entries) verifies", cFormat("%8.1f ms  (%.0f verify/s, 1 core)", reference, rate))
        line(
            "RATIO openssl / pinkeeper (goal > 1.0)", cFormat("%8.2f   (full path %.2f)", reference / total.median, reference / e2e.median))
    }
}

// MARK: - unchanged: the same list again, every entry known

func unchangedList(_ args: Arguments) async {
    let data = read(args.string("list"))
    let verifier = SignatureVerifier(keys: [key(args.string("public-key"))])
    let runs = args.int("runs", default: 7)
    let scratch = Scratch("unchanged")
    let merger = PinMerger(mode: .static, verifier: verifier)
    let first = must { try PinList(json: data) }
    let cached = must { try merger.merge(cached: [], received: first, now: Shared.now).pins }

    var parse = Sample(), merge = Sample(), publish = Sample(), total = Sample()
    let cache = CacheDirectory(path: scratch.directory())
    for _ in 0..<runs {
        let start = ContinuousClock.now
        let (list, tParse) = time { must { try PinList(json: data) } }
        let (outcome, tMerge) = time { must { try merger.merge(cached: cached, received: list, now: Shared.now) } }
        guard outcome.added == 0 else { fail("unchanged list added \(outcome.added)") }
        let file = CacheFile(
            list: PinList(pins: outcome.pins, domainsConfig: outcome.domainsConfig),
            metadata: .init(store: "bench", source: "https://127.0.0.1/bench", updated: Shared.now, nextUpdate: Shared.now + 3600))
        let (_, tPublish) = time { must { try cache.publish(file) } }
        total.add((ContinuousClock.now - start).ms)
        parse.add(tParse); merge.add(tMerge); publish.add(tPublish)
    }
    // Where an unchanged update's time goes, piece by piece (best of 5 each).
    func best(_ body: () -> Void) -> Double { (0..<5).map { _ in time(body).1 }.min()! }
    let publishedBytes = read(cache.filePath(for: "bench"))
    let tLoad = best { _ = cache.load(store: "bench", now: Shared.now) }
    let tCacheParse = best { _ = must { try CacheFile(json: publishedBytes) } }
    let tListParse = best { _ = must { try PinList(json: publishedBytes) } }
    let file = must { try CacheFile(json: publishedBytes) }
    let tEncode = best { _ = file.encoded() }
    let tDigest = best { _ = data.withUnsafeBytes { SHA256.digest($0) } }  // in place, as StoreUpdater hashes it

    // The whole update as the daemon runs it: 200 with the same bytes (matched by SHA-256), and 304.
    let store = StoreConfig(id: "bench", url: "https://127.0.0.1/bench", publicKeys: verifier.keys, mode: .static, policy: Shared.bigPolicy)
    var full200 = Sample(), full304 = Sample()
    let withETag = updater(CannedFetcher(headers: ["etag": "\"bench\""], body: data), scratch)
    let noETag = updater(CannedFetcher(body: data), scratch)
    for u in [withETag, noETag] {
        let first = await u.update(store)
        guard first.result == .ok else { fail("first update: \(first)") }
    }
    for _ in 0..<runs {
        let (a, t200) = await time { await noETag.update(store) }
        let (b, t304) = await time { await withETag.update(store) }
        guard a.result == .ok, b.result == .ok, b.notModified, a.notModified else { fail("unchanged update: \(a) \(b)") }
        full200.add(t200); full304.add(t304)
    }
    print("same list again, unchanged: \(cached.count) entries, all known (dedup before verify)")
    line("parse", parse.text)
    line("merge (dedup, nothing to verify)", merge.text)
    line("publish", publish.text)
    line("parse + merge + publish (goal at 10,000: <= 50 ms)", total.text)
    line("  of which: CacheDirectory.load (unchanged: memo)", cFormat("%8.1f ms  (best of 5)", tLoad))
    line("            CacheFile(json:)", cFormat("%8.1f ms  (PinList(json:) alone %.1f ms)", tCacheParse, tListParse))
    line("            CacheFile.encoded()", cFormat("%8.1f ms  (write + fsync + rename: the rest of publish)", tEncode))
    line("            SHA-256 of the body", cFormat("%8.1f ms  (%ld bytes)", tDigest, data.count))
    line("StoreUpdater.update, 200 same bytes (goal at 10,000: <= 50 ms)", full200.text)
    line("StoreUpdater.update, 304 Not Modified (goal at 10,000: <= 50 ms)", full304.text)
}

// MARK: - challenge: 10,000 entries in a signed body

func challengeList(_ args: Arguments) async {
    let body = read(args.string("body"))
    let challenge = args.string("challenge"), signature = args.string("signature")
    let verifier = SignatureVerifier(keys: [key(args.string("public-key"))])
    let runs = args.int("runs", default: 5)
    let scratch = Scratch("challenge")
    let merger = PinMerger(mode: .challenge, verifier: verifier)
    var envelope = Sample(), parse = Sample(), merge = Sample(), publish = Sample(), total = Sample()
    var entries = 0
    for _ in 0..<runs {
        let cache = CacheDirectory(path: scratch.directory())
        let start = ContinuousClock.now
        // The order of ListExchange.verifiedList: signature over challenge&body, then JSON.
        let (ok, tEnvelope) = time { verifier.verifyChallengeResponse(challenge: challenge, body: body, signatureBase64: signature) }
        guard ok else { fail("the challenge signature does not verify") }
        let (list, tParse) = time { must { try PinList(json: body) } }
        let (outcome, tMerge) = time { must { try merger.merge(cached: [], received: list, now: Shared.now) } }
        let file = CacheFile(
            list: PinList(pins: outcome.pins, domainsConfig: outcome.domainsConfig),
            metadata: .init(store: "bench", source: "https://127.0.0.1/bench", updated: Shared.now, nextUpdate: Shared.now + 3600))
        let (_, tPublish) = time { must { try cache.publish(file) } }
        total.add((ContinuousClock.now - start).ms)
        envelope.add(tEnvelope); parse.add(tParse); merge.add(tMerge); publish.add(tPublish)
        entries = outcome.added
    }
    print("challenge mode: \(entries) entries, \(body.count) bytes body")
    line("verify envelope (challenge&body)", envelope.text)
    line("parse", parse.text)
    line("merge", merge.text)
    line("publish", publish.text)
    line("envelope + parse + merge + publish", total.text)
}

// MARK: - stores / http-list: real libcurl against the loopback fixture service

func store(_ id: String, url: String, ca: String, key: PublicKey, mode: ListMode) -> StoreConfig {
    StoreConfig(id: id, url: url, publicKeys: [key], mode: mode, caFile: ca, policy: Shared.bigPolicy)
}

/// CPU seconds (user + system) this process has used so far.
func cpuSeconds() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
}

/// Wall time of each pass, and the daemon side's CPU time per pass (the rest is the server).
func passes(_ stores: [StoreConfig], runs: Int, scratch: Scratch) async -> (Sample, Sample) {
    var sample = Sample(), cpu = Sample()
    for _ in 0..<runs {
        let u = updater(CurlFetcher(userAgent: "pinkeeper-bench"), scratch)
        let before = cpuSeconds()
        let (reports, t) = await time { await UpdatePass.run(stores, updater: u, concurrency: 8) }
        cpu.add((cpuSeconds() - before) * 1000)
        if let bad = reports.first(where: { $0.result != .ok }) { fail("\(bad.store): \(bad.result.rawValue) \(bad.reason ?? "")") }
        sample.add(t)
    }
    return (sample, cpu)
}

func manyStores(_ args: Arguments) async {
    let base = args.string("base-url"), ca = args.string("ca"), count = args.int("count", default: 100)
    let mode = ListMode(rawValue: args.string("mode", default: "challenge")) ?? .challenge
    let key = key(args.string("public-key"))
    let runs = args.int("runs", default: 5)
    let scratch = Scratch("stores")
    let all = (0..<count).map { store(cFormat("s%03ld", $0), url: "\(base)/\(cFormat("s%03ld", $0))", ca: ca, key: key, mode: mode) }
    _ = await passes([all[0]], runs: 1, scratch: scratch)  // warm-up: curl_global_init, CA file, server threads
    let (one, oneCPU) = await passes([all[0]], runs: runs, scratch: scratch)
    let (hundred, hundredCPU) = await passes(all, runs: max(3, runs / 2), scratch: scratch)
    print("one update pass against the loopback fixture (\(mode.rawValue) mode, HTTPS, UpdatePass concurrency 8)")
    line("1 store", one.text + cFormat("  pinkeeper CPU %.0f ms", oneCPU.median))
    line("\(count) stores", hundred.text + cFormat("  pinkeeper CPU %.0f ms", hundredCPU.median))
    line(
        "\(count) stores / 1 store",
        cFormat(
            "%8.1f×  (%.1f ms wall, %.1f ms pinkeeper CPU per store)", hundred.median / one.median,
            hundred.median / Double(count), hundredCPU.median / Double(count)))
}

func httpList(_ args: Arguments) async {
    let mode = ListMode(rawValue: args.string("mode", default: "challenge")) ?? .challenge
    let config = store("big", url: args.string("url"), ca: args.string("ca"), key: key(args.string("public-key")), mode: mode)
    let runs = args.int("runs", default: 3)
    let scratch = Scratch("http")
    var sample = Sample()
    var pins = 0
    for _ in 0..<runs {
        let u = updater(CurlFetcher(userAgent: "pinkeeper-bench"), scratch)
        let (report, t) = await time { await u.update(config) }
        guard report.result == .ok else { fail("update: \(report.result.rawValue) \(report.reason ?? "")") }
        pins = report.pins
        sample.add(t)
    }
    line("\(mode.rawValue), \(pins) entries, fetch over HTTPS included", sample.text)
}

// MARK: - verify: where the verification time goes, contexts per call vs contexts reused

/// The reused-context way of verifying, written here against OpenSSL directly because the
/// daemon's `EntryVerifier` (which PinMerger uses since issue 23) is internal to it: SHA-256
/// fetched once and one EVP_PKEY_CTX per worker, instead of `SignatureVerifier.verifyEntry`'s
/// EVP_DigestVerifyInit per entry (which in OpenSSL 3 looks the algorithms up again each time).
final class ReusedContextVerifier: @unchecked Sendable {  // immutable after init; contexts are per call
    nonisolated(unsafe) let key: OpaquePointer
    nonisolated(unsafe) let sha256: OpaquePointer

    init(base64: String) {
        let prefix: [UInt8] = [
            0x30, 0x59, 0x30, 0x13, 0x06, 0x07, 0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x02, 0x01,
            0x06, 0x08, 0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x03, 0x01, 0x07, 0x03, 0x42, 0x00,
        ]
        let der = prefix + Array(Data(base64Encoded: base64)!)
        key = der.withUnsafeBufferPointer { buffer in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            return d2i_PUBKEY(nil, &cursor, buffer.count)!
        }
        sha256 = EVP_MD_fetch(nil, "SHA256", nil)!
    }

    /// Verifies `pins[range]` with one context; returns whether each is valid.
    func verify(_ pins: [Pin], _ range: Range<Int>, into results: UnsafeMutableBufferPointer<Bool>) {
        guard let context = EVP_PKEY_CTX_new(key, nil), EVP_PKEY_verify_init(context) == 1 else { return }
        defer { EVP_PKEY_CTX_free(context) }
        var digest = [UInt8](repeating: 0, count: 32)
        for i in range {
            let pin = pins[i]
            guard let text = pin.signature, let signature = Data(base64Encoded: text) else { results[i] = false; continue }
            var message = SignatureVerifier.signedString(for: pin)
            var length: UInt32 = 0
            let hashed = message.withUTF8 { bytes in
                digest.withUnsafeMutableBufferPointer { EVP_Digest(bytes.baseAddress, bytes.count, $0.baseAddress, &length, sha256, nil) }
            }
            let ok =
                hashed == 1
                && signature.withUnsafeBytes { sig in
                    EVP_PKEY_verify(context, sig.baseAddress?.assumingMemoryBound(to: UInt8.self), sig.count, digest, 32)
                } == 1
            if !ok { ERR_clear_error() }
            results[i] = ok
        }
    }
}

func verifyBench(_ args: Arguments) {
    let list = must { try PinList(json: read(args.string("list"))) }
    let base64 = args.string("public-key")
    let verifier = SignatureVerifier(keys: [key(base64)])
    let fast = ReusedContextVerifier(base64: base64)
    let pins = list.pins, count = pins.count, runs = args.int("runs", default: 3)
    let results = UnsafeMutableBufferPointer<Bool>.allocate(capacity: count)
    defer { results.deallocate() }
    nonisolated(unsafe) let out = results
    let chunk = 64, chunks = (count + chunk - 1) / chunk
    var productSeq = Sample(), productPar = Sample(), fastSeq = Sample(), fastPar = Sample()
    for _ in 0..<runs {
        productSeq.add(time { for i in 0..<count { out[i] = verifier.verifyEntry(pins[i]) } }.1)
        productPar.add(
            time {
                DispatchQueue.concurrentPerform(iterations: chunks) { c in
                    for i in (c * chunk)..<min(count, (c + 1) * chunk) { out[i] = verifier.verifyEntry(pins[i]) }
                }
            }.1)
        fastSeq.add(time { fast.verify(pins, 0..<count, into: out) }.1)
        guard !out.contains(false) else { fail("the reused contexts rejected a valid entry") }
        fastPar.add(
            time {
                DispatchQueue.concurrentPerform(iterations: chunks) { c in
                    fast.verify(pins, (c * chunk)..<min(count, (c + 1) * chunk), into: out)
                }
            }.1)
    }
    print("verification of \(count) static entries")
    line("contexts per call, 1 thread (SignatureVerifier.verifyEntry)", productSeq.text)
    line("contexts per call, all cores", productPar.text + cFormat("  %.2f×", productSeq.median / productPar.median))
    line("contexts reused, 1 thread (as EntryVerifier)", fastSeq.text)
    line("contexts reused, all cores (as PinMerger)", fastPar.text + cFormat("  %.2f×", fastSeq.median / fastPar.median))
}

// MARK: - main

@main
enum PinKeeperBench {
    static func main() async {
        let args = Arguments(Array(CommandLine.arguments.dropFirst()))
        switch args.command {
        case "static": await staticList(args)
        case "unchanged": await unchangedList(args)
        case "challenge": await challengeList(args)
        case "stores": await manyStores(args)
        case "http-list": await httpList(args)
        case "verify": verifyBench(args)
        case "fleet": fleet(args)
        case "outage": outage(args)
        case "outage-sweep": outageSweep(args)
        default:
            print(
                "usage: pinkeeper-bench static|unchanged|challenge|stores|http-list|verify|"
                    + "fleet|outage|outage-sweep [--option value ...] (see scripts/bench.sh)"
            )
            exit(args.command == "help" ? 0 : 2)
        }
    }
}
