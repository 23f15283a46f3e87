import PinKeeper

/// A static list's entries as read, kept compact until they are verified and merged: per entry
/// one record and its fingerprint, name and signature bytes side by side, in chunks of 1,024
/// entries that can be let go one at a time. As `Pin`s (a struct, a fingerprint array and two
/// strings apiece) a 100,000-entry list took about 36 MB; here about 17 MB, and the chunks
/// already made into `Pin`s are let go while the rest are made (`pin(_:key:reusing:)`, `release(chunk:)`).
///
/// Entries are read as if their depth were 0: a static list's signatures do not cover it
/// (`PinMerger`), so only whether any entry had one is kept.
struct StaticEntries: Sendable {
    static let chunkSize = 1024

    fileprivate struct Record {
        /// The fingerprint starts here in its chunk's bytes; the name follows, then the signature.
        var start: UInt32
        var fingerprintCount: UInt32
        var nameCount: UInt32
        /// -1: no signature member.
        var signatureCount: Int32
        var expires: Int64
    }

    /// Written while the list is read; read-only once full, except `keys`, which only the
    /// `EarlyVerification` it was handed to writes, and only until it has stopped.
    final class Chunk: @unchecked Sendable {  // one writer at a time: the reader, then the verifier until it stops
        fileprivate var bytes: [UInt8] = []
        fileprivate var records: [Record] = []
        /// Per entry: the index of the key it verified under, -1 if none, -2 if not verified yet.
        var keys: [Int32] = []

        var count: Int { records.count }

        /// Entry `slot`'s bytes in place, for the length of `body`.
        func with<R>(_ slot: Int, _ body: (StaticEntry) -> R) -> R {
            let record = records[slot]
            return bytes.withUnsafeBytes { bytes in
                let start = Int(record.start)
                let nameStart = start + Int(record.fingerprintCount)
                let signatureStart = nameStart + Int(record.nameCount)
                return body(
                    StaticEntry(
                        fingerprint: UnsafeRawBufferPointer(rebasing: bytes[start..<nameStart]),
                        name: UnsafeRawBufferPointer(rebasing: bytes[nameStart..<signatureStart]),
                        signature: record.signatureCount < 0
                            ? nil : UnsafeRawBufferPointer(rebasing: bytes[signatureStart..<signatureStart + Int(record.signatureCount)]),
                        expires: record.expires))
            }
        }
    }

    private var chunks: [Chunk?] = []
    private(set) var count = 0
    /// Some entry carried a `depth` other than 0.
    private(set) var hadDepth = false

    init() {}

    init(_ pins: [Pin]) {
        for pin in pins { append(pin) }
    }

    mutating func append(_ pin: Pin) {
        if count % Self.chunkSize == 0 {
            let chunk = Chunk()
            chunk.records.reserveCapacity(Self.chunkSize)
            chunk.bytes.reserveCapacity(Self.chunkSize * 160)  // 32 + a name + 96 base64 characters
            chunks.append(chunk)
        }
        let chunk = chunks[chunks.count - 1]!
        let start = chunk.bytes.count
        pin.digest.withUnsafeBytes { chunk.bytes += $0 }
        chunk.bytes += pin.name.utf8
        if let signature = pin.signature { chunk.bytes += signature.utf8 }
        chunk.records.append(
            Record(
                start: UInt32(start), fingerprintCount: UInt32(SHA256Digest.byteCount), nameCount: UInt32(pin.name.utf8.count),
                signatureCount: pin.signature.map { Int32($0.utf8.count) } ?? -1, expires: pin.expires))
        if pin.depth != 0 { hadDepth = true }
        count += 1
    }

    func expires(_ index: Int) -> Int64 { record(index).1.expires }

    /// Entry `index`'s bytes in place, for the length of `body`.
    func with<R>(_ index: Int, _ body: (StaticEntry) -> R) -> R {
        chunks[index / Self.chunkSize]!.with(index % Self.chunkSize, body)
    }

    /// The chunk being filled once it is full (the entry just appended was its last): from then
    /// on it can be read on another thread.
    var fullChunk: Chunk? { count % Self.chunkSize == 0 && count > 0 ? chunks[chunks.count - 1] : nil }

    /// The key entry `index` verified under, as an `EarlyVerification` found it: an index into
    /// the keys, -1 for none, nil if it was not verified.
    func knownKey(_ index: Int) -> Int? {
        let keys = chunks[index / Self.chunkSize]!.keys
        let slot = index % Self.chunkSize
        return slot < keys.count && keys[slot] >= -1 ? Int(keys[slot]) : nil
    }

    /// Entry `index` as a leaf `Pin` verified by `key`; `name` is reused when it is the entry's
    /// name (a list names each host once per certificate, usually side by side).
    func pin(_ index: Int, key: String?, reusing name: String?) -> Pin {
        with(index) { entry in
            let text =
                name.flatMap { RawBytes.withUTF8($0) { $0.elementsEqual(entry.name) } ? $0 : nil }
                ?? String(decoding: entry.name, as: UTF8.self)
            return Pin(
                name: text, digest: SHA256Digest(entry.fingerprint)!, expires: entry.expires,
                signature: entry.signature.map { String(decoding: $0, as: UTF8.self) }, key: key)
        }
    }

    /// Lets go of chunk `chunk` (entries `chunk * chunkSize` up to the next chunk's); they must
    /// not be read again.
    mutating func release(chunk: Int) {
        chunks[chunk] = nil
    }

    private func record(_ index: Int) -> (Chunk, Record) {
        let chunk = chunks[index / Self.chunkSize]!
        return (chunk, chunk.records[index % Self.chunkSize])
    }
}

/// One entry's fields, borrowed from `StaticEntries` (or from a cached `Pin`, which may have a depth).
struct StaticEntry {
    var fingerprint: UnsafeRawBufferPointer
    var name: UnsafeRawBufferPointer
    var signature: UnsafeRawBufferPointer?
    var expires: Int64
    var depth = 0

    var nameText: String { String(decoding: name, as: UTF8.self) }

    /// The same pin as `other` (`Pin.Identity`).
    func sameIdentity(as other: StaticEntry) -> Bool {
        expires == other.expires && depth == other.depth && RawBytes.order(fingerprint, other.fingerprint) == 0
            && RawBytes.order(name, other.name) == 0
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(bytes: fingerprint)
        hasher.combine(expires)
        hasher.combine(depth)
        hasher.combine(bytes: name)
    }

    /// `Pin.publishedOrder`.
    static func publishedOrder(_ a: StaticEntry, _ b: StaticEntry) -> Bool {
        let names = RawBytes.order(a.name, b.name)
        if names != 0 { return names < 0 }
        if a.expires != b.expires { return a.expires > b.expires }
        if a.depth != b.depth { return a.depth < b.depth }
        return RawBytes.order(a.fingerprint, b.fingerprint) < 0
    }
}

/// A static list's entries for its digest: depth 0, and only those at `selection`.
struct StaticDigestEntries: DigestEntries {
    var entries: StaticEntries
    var selection: [Int]
    var count: Int { selection.count }

    func with<R>(_ index: Int, _ body: (DigestEntry) -> R) -> R {
        entries.with(selection[index]) { body(DigestEntry(name: $0.name, fingerprint: $0.fingerprint, expires: $0.expires, depth: 0)) }
    }
}
