import Foundation
import Glibc
import PinKeeper
import TestSupport
import Testing

/// The conformance table every reader answers (Tests/Conformance/cases.json; format in its
/// README), played through `CacheReader` and `HostName` with real files in a temporary directory.
@Suite("Conformance: the table every reader answers")
struct ConformanceTests {
    @Test("the Swift CacheReader gives the expected verdict and error", arguments: ConformanceTable.shared.cases)
    func swiftReader(_ testCase: ConformanceCase) throws {
        let player = ConformancePlayer(testCase)
        guard testCase.expected != "error" else {
            // The store's fallback file is refused: the reader cannot be opened at all.
            let error = #expect(throws: CacheReaderError.self, "\(testCase.rule)") { _ = try player.openReader() }
            #expect(error?.code.name == testCase.expectedError, "\(testCase.rule)")
            return
        }
        let (answer, reader) = try player.play()
        #expect(answer.rawValue == testCase.expected, "\(testCase.rule)")
        // The explicit re-read of the last version reports the case's error, or none.
        do {
            try reader.refresh()
            #expect(testCase.expectedError == nil, "\(testCase.rule): refresh() reported nothing")
        } catch {
            #expect(error.code.name == testCase.expectedError, "\(testCase.rule): \(error)")
        }
    }

    @Test("HostName gives each spelling its one form, or refuses it", arguments: ConformanceTable.shared.hostSpellings)
    func hostSpelling(_ row: ConformanceTable.HostSpelling) {
        #expect(HostName.canonical(row.spelling) == row.host, "\(row.spelling)")
        // The one form is its own one form: spelling it again changes nothing.
        if let host = row.host { #expect(HostName.canonical(host) == host) }
    }

    @Test("the table's error codes are exactly the Swift reader's, with the same kinds")
    func errorCodes() {
        let table = ConformanceTable.shared.errorCodes
        #expect(Set(table.keys) == Set(Self.allCodes.map(\.name)))
        for code in Self.allCodes {
            let kind = code.kind == .unreadable ? "unreadable" : "invalid"
            #expect(table[code.name] == .init(kind: kind, status: code.kind == .unreadable ? 74 : 65), "\(code.name)")
        }
    }

    @Test("the table is well formed: unique ids, known verdicts and codes, one question kind each")
    func tableIsWellFormed() {
        let table = ConformanceTable.shared
        let cases = table.cases
        #expect(cases.count >= 250)
        #expect(Set(cases.map(\.id)).count == cases.count)
        #expect(Set(table.hostSpellings.map(\.id)).count == table.hostSpellings.count)
        #expect(cases.allSatisfy { ["trusted", "untrusted", "empty", "error"].contains($0.expected) })
        #expect(cases.allSatisfy { $0.expectedError.map { table.errorCodes[$0] != nil } ?? true })
        #expect(cases.allSatisfy { $0.expected != "error" || $0.expectedError != nil })
        #expect(Set(cases.map(\.question.kind)) == ["fingerprint", "verified_chain", "certificate_pem"])
    }

    /// Every code the Swift reader reports; `exhaustive` stops compiling when one is added, so
    /// this list is updated with it.
    static let allCodes: [CacheReaderError.Code] = [
        .missing, .symlink, .notRegularFile, .tooLarge, .ioError(errno: EIO), .notJSON, .invalidContent,
        .missingMetadata, .unsupportedFormat, .wrongStore, .insecurePermissions,
    ]

    private static func exhaustive(_ code: CacheReaderError.Code) {
        switch code {
        case .missing, .symlink, .notRegularFile, .tooLarge, .ioError, .notJSON, .invalidContent, .missingMetadata,
            .unsupportedFormat, .wrongStore, .insecurePermissions:
            break
        }
    }
}
