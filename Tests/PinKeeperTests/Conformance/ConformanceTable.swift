import Foundation
import PinKeeper
import TestSupport
import Testing

/// Tests/Conformance/cases.json (format in its README): the contract every reader plays, read
/// once per test process.
struct ConformanceTable: Sendable {
    /// One row of `host_spellings`: what a spelling becomes, nil when it is refused.
    struct HostSpelling: Sendable, CustomTestStringConvertible {
        var id: String
        var spelling: String
        var host: String?
        var testDescription: String { id }
    }

    /// One member of `error_codes`.
    struct ErrorCode: Sendable, Equatable {
        var kind: String
        var status: Int
    }

    var errorCodes: [String: ErrorCode]
    var hostSpellings: [HostSpelling]
    var cases: [ConformanceCase]

    static let shared: ConformanceTable = {
        let url = TestEnvironment.packageRoot.appendingPathComponent("Tests/Conformance/cases.json")
        do {
            let document = try JSONSerialization.jsonObject(with: withEscapedByteOrderMarks(Data(contentsOf: url))) as? [String: Any] ?? [:]
            guard document["format"] as? Int == 2 else { fatalError("\(url.path) is not a format-2 conformance table") }
            return try ConformanceTable(document)
        } catch {
            fatalError("\(url.path) cannot be read: \(error)")
        }
    }()

    /// The table's raw U+FEFF characters (inside strings: cases of files that start with a byte
    /// order mark) written as `\ufeff` escapes, the same JSON: Foundation's parser on Linux drops
    /// a raw one from the start of a string, and the case would then test a file without it.
    private static func withEscapedByteOrderMarks(_ data: Data) -> Data {
        let mark = Data([0xEF, 0xBB, 0xBF])
        return data.replacing(mark, with: Data(#"\ufeff"#.utf8))
    }

    private init(_ document: [String: Any]) throws {
        guard let codes = document["error_codes"] as? [String: [String: Any]],
            let spellings = document["host_spellings"] as? [[String: Any]],
            let rows = document["cases"] as? [[String: Any]]
        else { throw ConformanceTableError(id: "document", reason: "error_codes, host_spellings or cases is missing") }
        errorCodes = try codes.mapValues { code in
            guard let kind = code["kind"] as? String, let status = code["status"] as? Int else {
                throw ConformanceTableError(id: "error_codes", reason: "a code without kind or status")
            }
            return ErrorCode(kind: kind, status: status)
        }
        hostSpellings = try spellings.map { row in
            guard let id = row["id"] as? String, let spelling = row["spelling"] as? String, row.keys.contains("host") else {
                throw ConformanceTableError(id: row["id"] as? String ?? "?", reason: "a host spelling without id, spelling or host")
            }
            return HostSpelling(id: id, spelling: spelling, host: row["host"] as? String)
        }
        cases = try rows.map(ConformanceCase.init(row:))
    }
}

struct ConformanceTableError: Error, CustomStringConvertible {
    var id: String
    var reason: String
    var description: String { "conformance case \(id): \(reason)" }
}
