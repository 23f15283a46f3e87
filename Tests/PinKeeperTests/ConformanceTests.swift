import Foundation
import Glibc
import PinKeeper
import TestSupport
import Testing

/// The conformance table every reader answers (Tests/Conformance/cases.json; format in its
/// README), played through `CacheReader` with real files in a temporary directory.
@Suite("Conformance: the table every reader answers")
struct ConformanceTests {
    @Test("the Swift CacheReader gives the expected verdict", arguments: ConformanceCase.all)
    func swiftReader(_ testCase: ConformanceCase) throws {
        let fixture = CacheFixture(store: ConformanceCase.store)
        let reader: CacheReader
        if let previous = testCase.previousCache {
            fixture.replace(with: previous)
            reader = try testCase.openReader(in: fixture)
            _ = try testCase.ask(reader)  // the previous version is read and answers
            if let current = testCase.currentFile {
                fixture.replace(with: current)
            } else {
                #expect(unlink(fixture.path) == 0)
            }
        } else {
            // Opened before the file exists: an invalid first version is then a refused update.
            reader = try testCase.openReader(in: fixture)
            if let current = testCase.currentFile { fixture.replace(with: current) }
        }
        let answer = try testCase.ask(reader)
        #expect(answer.rawValue == testCase.expected, "\(testCase.rule)")
    }

    @Test("the table is well formed: unique ids, known verdicts, one question kind each")
    func tableIsWellFormed() {
        let cases = ConformanceCase.all
        #expect(cases.count >= 50)
        #expect(Set(cases.map(\.id)).count == cases.count)
        #expect(cases.allSatisfy { ["trusted", "untrusted", "empty"].contains($0.expected) })
        #expect(Set(cases.map(\.question.kind)) == ["fingerprint", "verified_chain", "certificate_pem"])
    }
}

/// One row of cases.json, with its files already encoded.
struct ConformanceCase: Sendable, CustomTestStringConvertible {
    static let store = "banking"

    enum Question: Sendable {
        case fingerprint([UInt8], depth: Int)
        case verifiedChain([[UInt8]])
        case certificatePEM(String)

        var kind: String {
            switch self {
            case .fingerprint: "fingerprint"
            case .verifiedChain: "verified_chain"
            case .certificatePEM: "certificate_pem"
            }
        }
    }

    var id: String
    var rule: String
    var cache: Data?
    var cacheText: Data?
    var previousCache: Data?
    var fallback: Data?
    var expectedCommonNames: [String]?
    var now: Int64
    /// H, the host the client verified; N, the leaf's common name when the case gives one.
    var name: String
    var commonName: String?
    var question: Question
    var expected: String

    var testDescription: String { id }

    /// The version the question is finally asked about; nil means no file.
    var currentFile: Data? { cache ?? cacheText }

    func openReader(in fixture: CacheFixture) throws -> CacheReader {
        let fallbackFile = fallback.map { fixture.write("fallback.json", $0) }
        return try CacheReader(
            store: Self.store, cacheDirectory: fixture.directory.path, fallbackFile: fallbackFile,
            expectedCommonNames: expectedCommonNames)
    }

    func ask(_ reader: CacheReader) throws -> Verdict {
        switch question {
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

    /// The table, read once from the package's Tests/Conformance/cases.json.
    static let all: [ConformanceCase] = {
        let url = TestEnvironment.packageRoot.appendingPathComponent("Tests/Conformance/cases.json")
        do {
            let document = try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any]
            guard document?["format"] as? Int == 1, let rows = document?["cases"] as? [[String: Any]] else {
                fatalError("\(url.path) is not a format-1 conformance table")
            }
            return try rows.map(ConformanceCase.init(row:))
        } catch {
            fatalError("\(url.path) cannot be read: \(error)")
        }
    }()

    private init(row: [String: Any]) throws {
        func json(_ key: String) throws -> Data? {
            try row[key].map { try JSONSerialization.data(withJSONObject: $0) }
        }
        func digest(_ text: Any?) throws -> [UInt8] {
            guard let text = text as? String, let data = Data(base64Encoded: text) else {
                throw ConformanceTableError(id: row["id"] as? String ?? "?", reason: "a fingerprint is not base64")
            }
            return Array(data)
        }
        guard let id = row["id"] as? String, let rule = row["rule"] as? String, let now = row["now"] as? Int,
            let question = row["question"] as? [String: Any], let name = question["name"] as? String,
            let expected = row["expected"] as? String
        else { throw ConformanceTableError(id: row["id"] as? String ?? "?", reason: "a required member is missing") }
        self.id = id
        self.rule = rule
        self.now = Int64(now)
        self.name = name
        commonName = question["common_name"] as? String
        self.expected = expected
        cache = try json("cache")
        cacheText = (row["cache_text"] as? String).map { Data($0.utf8) }
        if let encoded = row["cache_base64"] as? String {
            // Bytes a JSON string cannot carry: invalid UTF-8, UTF-16.
            guard let bytes = Data(base64Encoded: encoded) else { throw ConformanceTableError(id: id, reason: "cache_base64 is not base64") }
            cacheText = bytes
        }
        previousCache = try json("previous_cache")
        fallback = try json("fallback")
        expectedCommonNames = row["expected_common_names"] as? [String]
        if question["fingerprint"] != nil {
            self.question = .fingerprint(try digest(question["fingerprint"]), depth: question["depth"] as? Int ?? 0)
        } else if let chain = question["verified_chain"] as? [Any] {
            self.question = .verifiedChain(try chain.map(digest))
        } else if let pem = question["certificate_pem"] as? String {
            self.question = .certificatePEM(pem)
        } else {
            throw ConformanceTableError(id: id, reason: "the question has no fingerprint, verified_chain or certificate_pem")
        }
    }
}

struct ConformanceTableError: Error, CustomStringConvertible {
    var id: String
    var reason: String
    var description: String { "conformance case \(id): \(reason)" }
}
