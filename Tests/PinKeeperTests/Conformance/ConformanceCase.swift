import Foundation
import PinKeeper
import Testing

/// One row of the table's `cases`, with its files already encoded.
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

    /// The files of the case and their modes (octal text in the table).
    struct Files: Sendable {
        /// The version the question is finally asked about; nil means no file.
        var cache: Data?
        var previousCache: Data?
        /// A hard link to the previous version is made before the reader opens.
        var previousCacheLinked = false
        var cacheMode: mode_t = 0o644
        var directoryMode: mode_t = 0o755
        var fallback: Data?
        var fallbackMode: mode_t = 0o644
        var fallbackMissing = false
    }

    var id: String
    var rule: String
    var files: Files
    var expectedCommonNames: [String]?
    var now: Int64
    /// The host as the client handed it over; N, the leaf's common name when the case gives one.
    var name: String
    var commonName: String?
    var question: Question
    /// `trusted`, `untrusted`, `empty`, or `error` when opening the reader fails.
    var expected: String
    /// The code (table spelling) the reader reports for this case's files, if it refuses one.
    var expectedError: String?
    var expectedCommand: (status: Int, word: String)

    var testDescription: String { id }

    init(row: [String: Any]) throws {
        let id = row["id"] as? String ?? "?"
        func fail(_ reason: String) -> ConformanceTableError { ConformanceTableError(id: id, reason: reason) }
        guard let rule = row["rule"] as? String, let now = row["now"] as? Int,
            let question = row["question"] as? [String: Any], let name = question["name"] as? String,
            let expected = row["expected"] as? String, let command = row["expected_command"] as? [String: Any],
            let status = command["status"] as? Int, let word = command["word"] as? String
        else { throw fail("a required member is missing") }
        self.id = id
        self.rule = rule
        self.now = Int64(now)
        self.name = name
        commonName = question["common_name"] as? String
        self.expected = expected
        expectedError = row["expected_error"] as? String
        expectedCommand = (status, word)
        expectedCommonNames = row["expected_common_names"] as? [String]
        files = try Self.files(row, fail)
        self.question = try Self.question(question, fail)
    }

    private static func files(_ row: [String: Any], _ fail: (String) -> ConformanceTableError) throws -> Files {
        func json(_ key: String) throws -> Data? {
            try row[key].map { try JSONSerialization.data(withJSONObject: $0) }
        }
        func mode(_ key: String, _ otherwise: mode_t) throws -> mode_t {
            guard let text = row[key] as? String else { return otherwise }
            guard let value = mode_t(text, radix: 8) else { throw fail("\(key) is not octal text") }
            return value
        }
        var files = Files()
        files.cache = try json("cache") ?? (row["cache_text"] as? String).map { Data($0.utf8) }
        if let encoded = row["cache_base64"] as? String {
            // Bytes a JSON string cannot carry: invalid UTF-8, UTF-16.
            guard let bytes = Data(base64Encoded: encoded) else { throw fail("cache_base64 is not base64") }
            files.cache = bytes
        }
        files.previousCache = try json("previous_cache")
        files.previousCacheLinked = row["previous_cache_linked"] as? Bool ?? false
        files.cacheMode = try mode("cache_mode", 0o644)
        files.directoryMode = try mode("directory_mode", 0o755)
        files.fallback = try json("fallback")
        files.fallbackMode = try mode("fallback_mode", 0o644)
        files.fallbackMissing = row["fallback_missing"] as? Bool ?? false
        return files
    }

    private static func question(_ question: [String: Any], _ fail: (String) -> ConformanceTableError) throws -> Question {
        func digest(_ text: Any?) throws -> [UInt8] {
            guard let text = text as? String, let data = Data(base64Encoded: text) else { throw fail("a fingerprint is not base64") }
            return Array(data)
        }
        if question["fingerprint"] != nil {
            return .fingerprint(try digest(question["fingerprint"]), depth: question["depth"] as? Int ?? 0)
        } else if let chain = question["verified_chain"] as? [Any] {
            return .verifiedChain(try chain.map(digest))
        } else if let pem = question["certificate_pem"] as? String {
            return .certificatePEM(pem)
        }
        throw fail("the question has no fingerprint, verified_chain or certificate_pem")
    }
}
