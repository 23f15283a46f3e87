import Testing
@testable import PinKeeperDaemon

/// What `ConfigLoader` says when a configuration file is not TOML: the file, the line, the
/// column and the reason, on one line; and that the type checks see TOML's types.
@Suite struct TOMLConfigErrorTests {
    typealias Config = ConfigTests

    @Test("a syntax error names the file, line, column and reason")
    func syntaxError() throws {
        let loaded = try Config.load("cache_directory = \"/c\"\n\nstate_directory = = \"/s\"\n")
        try Config.expectError(loaded, store: nil, key: nil, "line 3, column 19: expected a value")
        #expect(loaded.error?.description == "\(loaded.mainPath): line 3, column 19: expected a value")
    }

    @Test("a table rule broken in a drop-in names the drop-in")
    func ruleInADropIn() throws {
        let loaded = try Config.load("", dropIns: ["a.toml": "[stores.a]\nurl = \"https://x.example\"\n[stores.a]\n"])
        try Config.expectError(
            loaded, file: loaded.dropIn("a.toml"), store: nil, key: nil,
            "line 3, column 1: table [stores.a] is defined twice")
    }

    @Test(
        "an integer written as a float, or quoted, is not an integer",
        arguments: ["4.0", "\"4\"", "true", "1979-05-27"])
    func integerTypeCheck(_ value: String) throws {
        try Config.expectError(
            Config.load("concurrency = \(value)\n"), store: nil, key: "concurrency",
            "must be an integer")
    }

    @Test("a string key given another type", arguments: ["1", "[\"/c\"]", "{ path = \"/c\" }", "1979-05-27"])
    func stringTypeCheck(_ value: String) throws {
        try Config.expectError(
            Config.load("cache_directory = \(value)\n"), store: nil, key: "cache_directory",
            "must be a string")
    }

    @Test("[stores] given as a value, or a store as an inline table, reads like a table")
    func tablesWrittenInline() throws {
        try Config.expectError(Config.load("stores = 1\n"), store: nil, key: "stores", "must be a table")
        let loaded = try Config.load("stores = { a = { url = 1 } }\n")
        try Config.expectError(loaded, store: "a", key: "url", "must be a string")
    }
}
