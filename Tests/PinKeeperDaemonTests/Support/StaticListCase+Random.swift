import PinKeeper
import TestSupport

/// The generated cases: small lists with every rule in play, one list with a bad signature at
/// each position in turn, and lists of more than one chunk (`StaticEntries.chunkSize`), which
/// are verified while they are read.
extension StaticListCase {
    static let names = [
        "a.example", "a.example.com", "a-b.example.com", "aa.example.com", "api.example.com", "b.example.com",
        "www.example.com", "x.example.org", "xn--bcher-kva.example", "z.example",
    ]
    /// Around `now`: already expired, expiring this very second, soon, and late.
    static let expiries: [Int64] = [
        now - 86_400, now - 1, now, now + 1, now + 3_600, now + 86_400 * 7, now + 86_400 * 90, now + 86_400 * 400,
    ]
    static let badSignatures: [Signature] = [.forged, .wrong, .by(removedKey), .garbage, .missing, .empty]

    static func fingerprint(_ seed: Int) -> [UInt8] { (0..<32).map { UInt8(truncatingIfNeeded: seed &* 37 &+ $0 &* 11) } }

    /// A small list with every rule in play: duplicates (some with a depth or another
    /// signature), expired entries, entries already cached, cached pins of removed keys, a
    /// second key, a `domainsConfig`, expected names; one list in four carries bad signatures.
    static func random(seed: UInt64) -> StaticListCase {
        var random = SplitMix64(seed: seed)
        let configured = [[0], [0], [0, 1], [1, 0]].randomElement(using: &random)!
        let names = Array(Self.names.shuffled(using: &random).prefix(Int.random(in: 1...6, using: &random)))
        var entries = (0..<Int.random(in: 0...40, using: &random)).map { _ in
            Entry(
                name: names.randomElement(using: &random)!, fingerprint: fingerprint(Int.random(in: 0..<5, using: &random)),
                expires: expiries.randomElement(using: &random)!, depth: Int.random(in: 0..<12, using: &random) == 0 ? 1 : 0,
                signature: .by(Int.random(in: 0..<6, using: &random) == 0 ? configured.last! : configured[0]))
        }
        for _ in 0..<Int.random(in: 0...4, using: &random) where !entries.isEmpty {
            var copy = entries.randomElement(using: &random)!
            if Bool.random(using: &random) { copy.depth = 2 }
            if Bool.random(using: &random) { copy.signature = badSignatures.randomElement(using: &random)! }
            entries.insert(copy, at: Int.random(in: 0...entries.count, using: &random))
        }
        if Int.random(in: 0..<4, using: &random) == 0 {
            for _ in 0..<Int.random(in: 1...2, using: &random) where !entries.isEmpty {
                entries[Int.random(in: 0..<entries.count, using: &random)].signature = badSignatures.randomElement(using: &random)!
            }
        }
        let cached = (0..<Int.random(in: 0...6, using: &random)).map { _ in
            let tag = [0, 0, 1, removedKey, nil].randomElement(using: &random)!
            if !entries.isEmpty && Bool.random(using: &random) { return cachedPin(entries.randomElement(using: &random)!, tag: tag) }
            let entry = Entry(
                name: names.randomElement(using: &random)!, fingerprint: fingerprint(Int.random(in: 0..<8, using: &random)),
                expires: expiries.randomElement(using: &random)!, signature: .missing)
            return cachedPin(entry, tag: tag)
        }
        return StaticListCase(
            label: "random seed \(seed)", entries: entries, domainsConfig: Int.random(in: 0..<10, using: &random) == 0,
            cached: publishedOrder(cached), hasPublished: Bool.random(using: &random),
            plannedNextUpdate: now + Int64.random(in: -90_000...3_600, using: &random), configured: configured,
            expectedNames: Int.random(in: 0..<3, using: &random) == 0 ? Array(names.prefix(2)) : nil)
    }

    /// A valid list of 10 to 14 entries (expired ones and duplicates among them) and, for each
    /// position in turn, the same list with a bad signature there.
    static func badAtEveryPosition(seed: UInt64) -> [StaticListCase] {
        var random = SplitMix64(seed: seed)
        var base = StaticListCase.random(seed: seed)
        base.entries = (0..<Int.random(in: 10...14, using: &random)).map { index in
            Entry(
                name: names[index % 4], fingerprint: fingerprint(index % 3), expires: expiries[(index * 3) % expiries.count],
                signature: .by(base.configured[0]))
        }
        return base.entries.indices.map { position in
            var bad = base
            bad.label = "seed \(seed), bad signature at \(position)"
            bad.entries[position].signature = badSignatures[position % badSignatures.count]
            return bad
        }
    }

    /// 1,100 to 2,400 entries (so one or two full chunks and a partial one), a few expired or
    /// repeated, some already cached; `bad`: the position of a forged signature.
    static func large(seed: UInt64, bad: Int?) -> StaticListCase {
        var random = SplitMix64(seed: seed)
        let count = Int.random(in: 1_100...2_400, using: &random)
        let configured = Bool.random(using: &random) ? [0] : [0, 1]
        var entries = (0..<count).map { index in
            Entry(
                name: "h\(index % 700).example.com", fingerprint: fingerprint(index),
                expires: Int.random(in: 0..<40, using: &random) == 0 ? now - 60 : now + 86_400 * Int64(1 + index % 90),
                signature: .by(Int.random(in: 0..<200, using: &random) == 0 ? configured.last! : 0))
        }
        for _ in 0..<5 { entries.append(entries[Int.random(in: 0..<count, using: &random)]) }
        if let bad { entries[min(bad, entries.count - 1)].signature = .forged }
        let cached = (0..<Int.random(in: 0...30, using: &random)).map { _ in
            cachedPin(entries[Int.random(in: 0..<count, using: &random)], tag: [0, removedKey].randomElement(using: &random)!)
        }
        return StaticListCase(
            label: "large seed \(seed), bad at \(bad.map(String.init) ?? "none")", entries: entries,
            cached: publishedOrder(cached), configured: configured)
    }
}
