import Testing
@testable import PinKeeperDaemon

/// Documents written to hurt the reader: nesting that would exhaust the stack, and sizes at
/// which a quadratic step would take minutes instead of milliseconds.
@Suite struct TOMLHostileInputTests {
    static let limit = TOMLParser.deepestNesting

    static func reason(_ text: String) -> String? {
        do {
            _ = try TOMLParser.parse(text)
            return nil
        } catch {
            return error.reason
        }
    }

    static func parts(_ count: Int) -> String { Array(repeating: "a", count: count).joined(separator: ".") }

    // MARK: Depth of the whole tree

    @Test("a table header with 40,000 parts is an error, not a stack overflow")
    func deepHeader() throws {
        let error = try #require(throws: TOMLError.self) { try TOMLParser.parse("[\(Self.parts(40_000))]\n") }
        #expect(error.reason.contains("more than \(Self.limit) levels deep"), "\(error)")
        #expect(error.line == 1 && error.column == 2 + 2 * Self.limit, "points at the part one level too deep: \(error)")
        #expect(throws: TOMLError.self) { try TOMLParser.parse("[[\(Self.parts(40_000))]]\n") }
    }

    @Test("a dotted key with 40,000 parts is an error, not a stack overflow")
    func deepDottedKey() throws {
        let error = try #require(throws: TOMLError.self) { try TOMLParser.parse("x = 1\n\(Self.parts(40_000)) = 1\n") }
        #expect(error.reason.contains("more than \(Self.limit) levels deep"), "\(error)")
        #expect(error.line == 2, "\(error)")
        #expect(throws: TOMLError.self) { try TOMLParser.parse("t = { \(Self.parts(40_000)) = 1 }") }
    }

    @Test("dotted keys inside nested inline tables count every table they open")
    func inlineTablesWithDottedKeys() throws {
        // Each `{ b.c = ` opens two levels: the inline table and the table `b`.
        func nested(_ count: Int) -> String {
            "a = " + String(repeating: "{ b.c = ", count: count) + "1" + String(repeating: " }", count: count)
        }
        _ = try TOMLParser.parse(nested(Self.limit / 2))
        #expect(Self.reason(nested(Self.limit / 2 + 1))?.contains("levels deep") == true)
        #expect(Self.reason(nested(20_000))?.contains("levels deep") == true)
    }

    @Test("depth exactly at the limit is accepted, one level more is refused")
    func depthAtTheLimit() throws {
        let limit = Self.limit
        // Headers: every part is a table; an array of tables is a level of its own.
        _ = try TOMLParser.parse("[\(Self.parts(limit))]")
        #expect(Self.reason("[\(Self.parts(limit + 1))]") != nil)
        _ = try TOMLParser.parse("[[\(Self.parts(limit - 1))]]")
        #expect(Self.reason("[[\(Self.parts(limit))]]") != nil)
        #expect(Self.reason("[[a]]\n[\(Self.parts(limit))]") != nil)
        // Dotted keys: the last part names a value, which is a level only if it is a table or array.
        _ = try TOMLParser.parse("\(Self.parts(limit + 1)) = 1")
        #expect(Self.reason("\(Self.parts(limit + 2)) = 1") != nil)
        _ = try TOMLParser.parse("\(Self.parts(limit)) = []")
        #expect(Self.reason("\(Self.parts(limit)) = [[]]") != nil)
        // Header, dotted key and values add up: 50 header tables, 49 dotted-key tables, 1 array.
        let header = "[\(Self.parts(50))]\n\(Self.parts(50))"
        _ = try TOMLParser.parse(header + " = [1]")
        #expect(Self.reason(header + " = [[1]]")?.contains("levels deep") == true)
        #expect(Self.reason(header + " = {b = 1}") == nil)
        #expect(Self.reason(header + " = {b.c = 1}")?.contains("levels deep") == true)
    }

    // MARK: Linear time

    // A quadratic step makes each of these take minutes; linear reading takes well under a second.
    @Test("100,000 [[x]] headers are read in linear time", .timeLimit(.minutes(1)))
    func manyArrayOfTablesHeaders() throws {
        let table = try TOMLParser.parse(String(repeating: "[[x]]\n", count: 100_000))
        #expect(table["x"]?.array?.count == 100_000)
    }

    @Test("a table with 100,000 keys is read in linear time", .timeLimit(.minutes(1)))
    func wideTable() throws {
        var text = "[t]\n"
        for index in 0..<100_000 { text += "k\(index).v = \(index)\n" }
        let table = try TOMLParser.parse(text)
        #expect(table["t"]?.table?.count == 100_000)
        #expect(table["t"]?.table?["k99999"]?.table?["v"] == .integer(99_999))
    }

    @Test("an inline table and an array with 100,000 entries are read in linear time", .timeLimit(.minutes(1)))
    func wideInlineTableAndArray() throws {
        let keys = (0..<100_000).map { "k\($0) = \($0)" }.joined(separator: ", ")
        let values = (0..<100_000).map(String.init).joined(separator: ", ")
        let table = try TOMLParser.parse("t = { \(keys) }\na = [\(values)]\n")
        #expect(table["t"]?.table?.count == 100_000)
        #expect(table["a"]?.array?.count == 100_000)
    }
}
