// In-process reader benchmark, compiled by scripts/bench-readers.sh together with the sources of
// the PinKeeper library (one module, -O -wmo, as a release build optimises them), so it needs no
// target in Package.swift. Usage: bench-readers CACHE_FILE SECONDS
import Foundation
import Glibc

@main
enum BenchReaders {
    static func main() throws {
        let arguments = CommandLine.arguments
        guard arguments.count == 3, let seconds = Double(arguments[2]) else {
            FileHandle.standardError.write(Data("usage: bench-readers CACHE_FILE SECONDS\n".utf8))
            exit(64)
        }
        let path = arguments[1]
        let reader = try CacheReader(path: path)
        let pins = reader.snapshot().cache?.list.pins ?? []
        guard !pins.isEmpty else { fatalError("no pins in \(path)") }
        print("store: \(pins.count) pins, \(Set(pins.map(\.name)).count) common names")

        // A third of the questions are trusted, a third untrusted, a third empty (unknown name).
        let queries: [(String, [UInt8])] = (0..<999).map { index in
            let pin = pins[(index * 7) % pins.count]
            switch index % 3 {
            case 0: return (pin.name, pin.fingerprint)
            case 1: return (pin.name, [UInt8](repeating: 0xEE, count: 32))
            default: return ("unknown-\(index).example.com", pin.fingerprint)
            }
        }

        let single = measure(seconds: seconds) { iteration in
            let (name, fingerprint) = queries[iteration % queries.count]
            return reader.verdict(host: name, fingerprint: fingerprint)
        }
        report("verdict(host:fingerprint:), 1 thread", single)

        let threads = max(2, ProcessInfo.processInfo.activeProcessorCount)
        let shared = Counter()
        let start = now()
        DispatchQueue.concurrentPerform(iterations: threads) { worker in
            let result = measure(seconds: seconds) { iteration in
                let (name, fingerprint) = queries[(iteration + worker * 333) % queries.count]
                return reader.verdict(host: name, fingerprint: fingerprint)
            }
            shared.add(result.count)
        }
        report("verdict(host:fingerprint:), \(threads) threads sharing one reader",
               (count: shared.total, seconds: now() - start, answers: [:]))

        // A DER leaf: the SHA-256 of the certificate is part of every question.
        let der = [UInt8](repeating: 0x30, count: 1_200)
        let certificate = measure(seconds: seconds) { iteration in
            reader.verdict(host: queries[iteration % queries.count].0, certificateDER: der)
        }
        report("verdict(host:certificateDER:), 1.2 KB certificate", certificate)

        // What a changed file costs: a replacement (new inode) forces a read and parse at the next question.
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        let copy = path + ".bench-copy"
        var reloads = 0
        let reloadStart = now()
        while now() - reloadStart < seconds {
            try bytes.write(to: URL(fileURLWithPath: copy))
            rename(copy, path)
            _ = reader.verdict(host: queries[0].0, fingerprint: queries[0].1)
            reloads += 1
        }
        let reloadSeconds = now() - reloadStart
        print(String(format: "reload after replacement (write + rename + read + parse %d pins): %.2f ms each",
                     pins.count, reloadSeconds / Double(reloads) * 1_000))

        // The reader's own part of that: a new modification time makes the next question read and
        // parse the file again, with nothing written. Minimum and median of the rounds.
        var rereads: [Double] = []
        let rereadStart = now()
        while now() - rereadStart < seconds || rereads.count < 3 {
            var times = [timespec(tv_sec: 1_000_000 + rereads.count, tv_nsec: 0), timespec(tv_sec: 1_000_000 + rereads.count, tv_nsec: 0)]
            utimensat(AT_FDCWD, path, &times, 0)
            let start = now()
            _ = reader.verdict(host: queries[0].0, fingerprint: queries[0].1)
            rereads.append(now() - start)
        }
        rereads.sort()
        print(String(format: "re-read after a change (new mtime, nothing written; read + parse + index): min %.2f ms, median %.2f ms of %d",
                     rereads[0] * 1_000, rereads[rereads.count / 2] * 1_000, rereads.count))
    }

    typealias Result = (count: Int, seconds: Double, answers: [Verdict: Int])

    static func measure(seconds: Double, _ body: (Int) -> Verdict) -> Result {
        var answers: [Verdict: Int] = [:]
        var count = 0
        let start = now()
        var elapsed = 0.0
        while elapsed < seconds {
            for _ in 0..<10_000 {
                answers[body(count), default: 0] += 1
                count += 1
            }
            elapsed = now() - start
        }
        return (count, elapsed, answers)
    }

    static func report(_ label: String, _ result: Result) {
        let rate = Double(result.count) / result.seconds
        let mix = result.answers.isEmpty ? "" : " (" + result.answers.sorted { $0.key.rawValue < $1.key.rawValue }
            .map { "\($0.key.rawValue) \($0.value)" }.joined(separator: ", ") + ")"
        print(String(format: "%@: %.0f validations/s, %.0f ns each%@", label, rate, 1e9 / rate, mix))
    }

    static func now() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }
}

private final class Counter: @unchecked Sendable {  // guarded by `lock`
    private let lock = NSLock()
    private var value = 0
    func add(_ amount: Int) { lock.withLock { value += amount } }
    var total: Int { lock.withLock { value } }
}
