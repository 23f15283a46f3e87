import Foundation
import Glibc
import PinKeeper
import Testing

/// Plays one case through `CacheReader` as the table's README says: real files in a fresh
/// directory (with the case's modes), each version renamed into place as the daemon does.
struct ConformancePlayer: ~Copyable {
    let testCase: ConformanceCase
    let fixture = CacheFixture(store: ConformanceCase.store)

    init(_ testCase: ConformanceCase) {
        self.testCase = testCase
        chmod(fixture.directory.path, testCase.files.directoryMode)
    }

    deinit { chmod(fixture.directory.path, 0o755) }

    /// The fallback file the case gives the store: written with its mode, or a path to nothing.
    func fallbackFile() -> String? {
        let files = testCase.files
        if files.fallbackMissing { return fixture.directory.appendingPathComponent("no-such-fallback.json").path }
        guard let fallback = files.fallback else { return nil }
        let path = fixture.write("fallback.json", fallback)
        chmod(path, files.fallbackMode)
        return path
    }

    func openReader() throws(CacheReaderError) -> CacheReader {
        try CacheReader(
            store: ConformanceCase.store, cacheDirectory: fixture.directory.path, fallbackFile: fallbackFile(),
            expectedCommonNames: testCase.expectedCommonNames)
    }

    /// The verdict for the case's last version, the reader opened as the README says.
    func play() throws -> (Verdict, CacheReader) {
        let files = testCase.files
        let reader: CacheReader
        if let previous = files.previousCache {
            fixture.replace(with: previous, mode: 0o644)
            if files.previousCacheLinked {
                #expect(link(fixture.path, fixture.directory.appendingPathComponent("\(ConformanceCase.store)-backup.json").path) == 0)
            }
            reader = try openReader()
            _ = try ask(reader)  // the previous version is read and answers
            if let current = files.cache {
                fixture.replace(with: current, mode: files.cacheMode)
            } else {
                #expect(unlink(fixture.path) == 0)
            }
        } else {
            // Opened before the file exists: an invalid first version is then a refused update.
            reader = try openReader()
            if let current = files.cache { fixture.replace(with: current, mode: files.cacheMode) }
        }
        return (try ask(reader), reader)
    }

    func ask(_ reader: CacheReader) throws -> Verdict {
        let name = testCase.name, commonName = testCase.commonName, now = testCase.now
        switch testCase.question {
        case .fingerprint(let digest, let depth):
            return reader.verdict(host: name, commonName: commonName, fingerprint: digest, depth: depth, now: now)
        case .certificatePEM(let pem):
            let leaf = try #require(try Certificate.chain(from: Array(pem.utf8)).first)
            return reader.verdict(host: name, commonName: commonName, certificateDER: leaf.der, now: now)
        case .verifiedChain(let digests):
            // The chain question through the digest-and-depth API: one question per position of
            // the chain (so pins deeper than the chain are never asked about), then any match
            // wins and any counted attempt makes it untrusted, as for one whole chain.
            try #require(!digests.isEmpty, "a verified chain has a leaf")
            let answers = digests.enumerated().map { depth, digest in
                reader.verdict(host: name, commonName: commonName, fingerprint: digest, depth: depth, now: now)
            }
            if answers.contains(.trusted) { return .trusted }
            return answers.contains(.untrusted) ? .untrusted : .empty
        }
    }
}
