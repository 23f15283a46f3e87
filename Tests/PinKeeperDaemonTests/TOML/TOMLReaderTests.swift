import Testing
@testable import PinKeeperDaemon

/// The TOML reader construct by construct, and each class of error with its position.
@Suite struct TOMLReaderTests {
    static func read(_ text: String) throws -> TOMLTable { try TOMLParser.parse(text) }

    static func failure(_ text: String) -> TOMLError? {
        #expect(throws: TOMLError.self, "\(text.debugDescription)") { try TOMLParser.parse(text) }
        do {
            _ = try TOMLParser.parse(text)
            return nil
        } catch {
            return error
        }
    }

    // MARK: Values

    @Test func scalarsKeepTheirTypes() throws {
        let table = try Self.read("i = 1\nf = 1.0\ns = \"1\"\nb = true\nd = 1979-05-27\n")
        #expect(table["i"] == .integer(1) && table["i"]?.int == 1)
        #expect(table["f"] == .float(1.0) && table["f"]?.int == nil)
        #expect(table["s"]?.string == "1" && table["s"]?.int == nil)
        #expect(table["b"]?.bool == true && table["b"]?.string == nil)
        #expect(table["d"] == .dateTime(TOMLDateTime(kind: .localDate, text: "1979-05-27")))
    }

    @Test(arguments: [
        ("0x_ff", false), ("0xff", true), ("0o17", true), ("0b101", true), ("1_000", true), ("1__0", false),
        ("-9223372036854775808", true), ("9223372036854775808", false), ("0xFFFFFFFFFFFFFFFF", false),
        ("007", false), ("+0", true),
    ])
    func integers(_ text: String, _ valid: Bool) throws {
        let expected: [String: Int64] = ["0xff": 255, "0o17": 15, "0b101": 5, "1_000": 1000, "-9223372036854775808": .min, "+0": 0]
        if valid {
            #expect(try Self.read("i = \(text)")["i"] == .integer(expected[text]!))
        } else {
            #expect(Self.failure("i = \(text)") != nil)
        }
    }

    @Test func floats() throws {
        let table = try Self.read("a = 6.626e-34\nb = -inf\nc = nan\nd = 1_0.2_5\ne = -0.0\nf = 5E+2")
        #expect(table["a"] == .float(6.626e-34) && table["b"] == .float(-.infinity))
        if case .float(let nan)? = table["c"] { #expect(nan.isNaN) } else { Issue.record("c is not a float") }
        #expect(table["d"] == .float(10.25) && table["f"] == .float(500))
        if case .float(let zero)? = table["e"] { #expect(zero == 0 && zero.sign == .minus) }
    }

    @Test func strings() throws {
        let table = try Self.read(
            """
            a = "tab\\t quote\\" nul\\u0000 smile\\U0001F600"
            b = 'C:\\path'
            c = \"\"\"
            one \\
                two\r
            three\"\"\"\"
            d = '''
            raw\\n'''
            """)
        #expect(table["a"]?.string == "tab\t quote\" nul\u{0} smile😀")
        #expect(table["b"]?.string == "C:\\path")
        #expect(table["c"]?.string == "one two\nthree\"")
        #expect(table["d"]?.string == "raw\\n")
    }

    @Test func datesKeepTheirTextAndKind() throws {
        let table = try Self.read("a = 1979-05-27T07:32:00.5-07:00\nb = 1979-05-27 07:32:00\nc = 07:32:00\nd = 2000-02-29")
        #expect(table["a"] == .dateTime(TOMLDateTime(kind: .offsetDateTime, text: "1979-05-27T07:32:00.5-07:00")))
        #expect(table["b"] == .dateTime(TOMLDateTime(kind: .localDateTime, text: "1979-05-27 07:32:00")))
        #expect(table["c"] == .dateTime(TOMLDateTime(kind: .localTime, text: "07:32:00")))
        #expect(table["d"] == .dateTime(TOMLDateTime(kind: .localDate, text: "2000-02-29")))
    }

    @Test("year 0000 is a valid RFC 3339 year (tomllib refuses it, so it is checked here)")
    func yearZero() throws {
        for text in TOMLCorpus.validOnlyForUs { _ = try Self.read(text) }
    }

    @Test func arraysAndInlineTables() throws {
        let table = try Self.read("a = [\n  1, # one\n  'two',\n  [3.0],\n  { x = 1 },\n]\nt = { p.q = 1, r = [] }")
        #expect(table["a"]?.array?.count == 4)
        #expect(table["a"]?.array?[1].string == "two")
        #expect(table["a"]?.array?[3].table?["x"]?.int == 1)
        #expect(table["t"]?.table?["p"]?.table?["q"]?.int == 1)
        #expect(table["t"]?.table?["r"]?.array == [])
    }

    // MARK: Tables

    @Test func tablesAndArraysOfTables() throws {
        let table = try Self.read(
            """
            top = 1
            [a.b]
            c = 2
            [a]
            d.e = 3
            [[f]]
            g = 1
            [f.h]
            [[f]]
            g = 2
            """)
        #expect(table.keys == ["a", "f", "top"])
        #expect(table["a"]?.table?["b"]?.table?["c"]?.int == 2)
        #expect(table["a"]?.table?["d"]?.table?["e"]?.int == 3)
        let elements = try #require(table["f"]?.array)
        #expect(elements.map { $0.table?["g"]?.int } == [1, 2])
        #expect(elements[0].table?["h"]?.table?.count == 0)
    }

    @Test("keys are compared byte for byte: canonically equivalent keys stay two keys")
    func exactKeys() throws {
        let table = try Self.read("\"\\u00e9\" = 1\n\"e\\u0301\" = 2")
        #expect(table.count == 2 && table["\u{e9}"] == .integer(1))
    }

    // MARK: Errors and their positions

    @Test(
        "each broken rule names its line and column",
        arguments: [
            ("a = 1\na = 2", 2, 1, "defined twice"),
            ("[t]\n[t]", 2, 1, "defined twice"),
            ("a.b = 1\n[a]", 2, 1, "dotted keys"),
            ("[a.b]\n[a]\nb.c = 1", 3, 1, "own [header]"),
            ("t = {a = 1}\n[t.b]", 2, 1, "inline table"),
            ("a = [1]\n[[a]]", 2, 1, "array value"),
            ("[a]\n[[a]]", 2, 1, "not an array of tables"),
            ("[[a]]\n[a]", 2, 1, "array of tables"),
            ("t = {a = 1,}", 1, 12, "no comma"),
            ("t = {a = 1\n}", 1, 11, "one line"),
            ("s = \"\\e\"", 1, 6, "invalid escape"),
            ("s = \"\\uD800\"", 1, 6, "Unicode scalar"),
            ("s = \"abc\nx = 1", 1, 5, "no closing quote"),
            ("# ok\nx = 1 # \u{7}", 2, 9, "control character"),
            ("s = 'é\u{1}'", 1, 7, "control character"),
            ("i = 01", 1, 5, "leading zeros"),
            ("i = 1__0", 1, 7, "underscore"),
            ("i = 9223372036854775808", 1, 5, "64 bits"),
            ("f = 1.", 1, 7, "decimal point"),
            ("d = 2023-02-29", 1, 13, "does not exist"),
            ("d = 1979-05-27T24:00:00", 1, 16, "out of range"),
            ("a = 1 b = 2", 1, 7, "end of the line"),
            ("a = 1\r", 1, 6, "carriage return"),
            ("a = yes", 1, 5, "strings need quotes"),
            ("é = 1", 1, 1, "expected a key"),
        ] as [(String, Int, Int, String)])
    func errorPositions(_ text: String, _ line: Int, _ column: Int, _ reason: String) throws {
        let error = try #require(Self.failure(text))
        #expect(error.line == line && error.column == column, "\(error)")
        #expect(error.reason.contains(reason), "\(error)")
    }

    @Test("bytes that are not UTF-8 are refused at their position")
    func invalidUTF8() throws {
        for bad: [UInt8] in [[0xFF], [0xC0, 0xAF], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0xE2, 0x82]] {
            let document = Array("a = 1\nb = \"".utf8) + bad + Array("\"\n".utf8)
            #expect(throws: TOMLError(line: 2, column: 6, reason: "the file is not valid UTF-8")) {
                try TOMLParser.parse(bytes: document)
            }
        }
    }

    @Test("a byte order mark at the start is skipped, elsewhere refused")
    func byteOrderMark() throws {
        #expect(try TOMLParser.parse(bytes: [0xEF, 0xBB, 0xBF] + Array("a = 1".utf8))["a"] == .integer(1))
        #expect(throws: TOMLError.self) { try TOMLParser.parse("a = 1\n\u{FEFF}b = 2") }
    }

    @Test("a byte order mark does not count as a column")
    func columnsAfterByteOrderMark() throws {
        let error = try #require(throws: TOMLError.self) {
            try TOMLParser.parse(bytes: [0xEF, 0xBB, 0xBF] + Array("a = x".utf8))
        }
        #expect(error.line == 1 && error.column == 5, "\(error)")
    }

    @Test("nesting deeper than the limit is an error, not a stack overflow")
    func deepNesting() throws {
        let depth = TOMLParser.deepestNesting
        _ = try Self.read("a = " + String(repeating: "[", count: depth) + String(repeating: "]", count: depth))
        let error = try #require(Self.failure("a = " + String(repeating: "[", count: 100_000)))
        #expect(error.reason.contains("levels deep"))
        #expect(Self.failure("a = " + String(repeating: "{b = ", count: depth + 1)) != nil)
    }

    @Test("CRLF counts as one line break; columns count characters, not bytes")
    func positionsWithCRLFAndUnicode() throws {
        let error = try #require(Self.failure("a = 1\r\nb = \"ü\" x"))
        #expect(error.line == 2 && error.column == 9, "\(error)")
    }
}
