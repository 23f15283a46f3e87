import Foundation
import TestSupport
import Testing
@testable import PinKeeperDaemon

/// Our reader against Python's tomllib, an independent TOML 1.0 reader, on the hand-written
/// corpus, random documents from the grammar and mutations of valid documents: one python3
/// process reads them all, and every disagreement fails, printing the document.
@Suite struct TOMLDifferentialTests {
    static let seed: UInt64 = 0x70_6B_74_6F_6D_6C  // fixed: a failure must reproduce
    static let generatedCount = 600
    static let mutationCount = 1500

    static func corpus() -> [[UInt8]] {
        var generator = TOMLGenerator(seed: seed)
        var documents = (TOMLCorpus.valid + TOMLCorpus.invalid).map { Array($0.utf8) }
        var generated: [String] = []
        for _ in 0..<generatedCount { generated.append(generator.document()) }
        documents += generated.map { Array($0.utf8) }
        let parents = TOMLCorpus.valid + generated
        for _ in 0..<mutationCount { documents.append(generator.mutate(generator.pick(parents))) }
        return documents
    }

    /// What tomllib makes of each document: canonical JSON or "error".
    static func python(_ documents: [[UInt8]]) throws -> [String] {
        let input = FileManager.default.temporaryDirectory.appendingPathComponent("toml-corpus-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: input) }
        var data = Data()
        for document in documents {
            data.append(contentsOf: Array("\(document.count)\n".utf8))
            data.append(contentsOf: document)
        }
        try data.write(to: input)
        let script = Vectors.root.deletingLastPathComponent().appendingPathComponent("toml-canonical.py").path
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", script, input.path]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let printed = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        try #require(process.terminationStatus == 0, "python3 \(script) failed")
        return String(decoding: printed, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
            .dropLast().map(String.init)
    }

    static func ours(_ document: [UInt8]) -> String {
        guard let table = try? TOMLParser.parse(bytes: document) else { return "error" }
        return TOMLCanonical.json(table)
    }

    @Test("the corpus has at least 150 hand-written cases and all kinds of generated ones")
    func corpusSize() {
        #expect(TOMLCorpus.valid.count + TOMLCorpus.invalid.count >= 150)
        #expect(Self.corpus().count == TOMLCorpus.valid.count + TOMLCorpus.invalid.count + Self.generatedCount + Self.mutationCount)
    }

    @Test("our reader and tomllib agree on every document (values, types and refusals)")
    func agreesWithTomllib() throws {
        let documents = Self.corpus()
        let theirs = try Self.python(documents)
        try #require(theirs.count == documents.count)
        var disagreements = 0
        for (document, expected) in zip(documents, theirs) {
            let actual = Self.ours(document)
            if actual != expected {
                disagreements += 1
                let text = String(decoding: document, as: UTF8.self).debugDescription
                Issue.record("document \(text) bytes \(document)\n  tomllib: \(expected)\n  ours:    \(actual)")
            }
        }
        #expect(disagreements == 0)
        // Both kinds in numbers: a comparison where everything is refused (or read) proves little.
        let handWritten = TOMLCorpus.valid.count + TOMLCorpus.invalid.count
        let segments = [
            ("hand-written", 0..<handWritten), ("generated", handWritten..<(handWritten + Self.generatedCount)),
            ("mutated", (handWritten + Self.generatedCount)..<documents.count),
        ]
        for (name, range) in segments {
            let read = theirs[range].filter { $0 != "error" }.count
            print("TOML differential, \(name): \(range.count) documents, \(read) read, \(range.count - read) refused")
            #expect(read > range.count / 10 && range.count - read > range.count / 10, "\(name): too one-sided to compare")
        }
    }

    @Test("the hand-written cases read as they are labelled")
    func handWrittenLabels() {
        for text in TOMLCorpus.valid + TOMLCorpus.validOnlyForUs {
            #expect(throws: Never.self, "\(text.debugDescription)") { try TOMLParser.parse(text) }
        }
        for text in TOMLCorpus.invalid {
            #expect(throws: TOMLError.self, "\(text.debugDescription)") { try TOMLParser.parse(text) }
        }
    }
}
