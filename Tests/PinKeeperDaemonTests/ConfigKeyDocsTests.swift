import Foundation
import TestSupport
import Testing
@testable import PinKeeperDaemon

/// Every key the parser accepts is documented where an operator looks for it: in
/// pinkeeper.toml(5), under the heading of each table that accepts it, and in the annotated
/// examples — the main file's keys in `etc/pinkeeper/pinkeeper.toml`, the keys only a store sets
/// in the store example of `etc/pinkeeper/stores.d/README` (the main file defines no store and
/// points there). The keys come from the parser's own lists, so a new key fails here until it
/// is documented.
@Suite("Configuration keys in the man page and the annotated examples")
struct ConfigKeyDocsTests {
    static func read(_ path: String) throws -> String {
        try String(contentsOf: TestEnvironment.packageRoot.appendingPathComponent(path), encoding: .utf8)
    }

    /// The words of the tag line after each `.TP`, by the `.SH` or `.SS` heading above it.
    static func manPageTags(_ page: String) -> [String: Set<String>] {
        var tags: [String: Set<String>] = [:]
        var heading = "", tagLine = false
        for line in page.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix(".SH ") || line.hasPrefix(".SS ") {
                heading = String(line.dropFirst(4))
            } else if line.hasPrefix(".TP") {
                tagLine = true
            } else if tagLine {
                tagLine = false
                // Key names are lower case and underscores; macros, quotes and commas separate them.
                let words = line.split { !(("a"..."z").contains($0) || $0 == "_") }.map(String.init)
                tags[heading, default: []].formUnion(words)
            }
        }
        return tags
    }

    /// The keys an example assigns, commented out or not, by the table header above them ("" before the first).
    static func exampleKeys(_ example: String) -> [String: Set<String>] {
        var keys: [String: Set<String>] = [:]
        var table = ""
        for line in example.split(separator: "\n") {
            let text = line.drop { $0 == "#" || $0 == " " }
            if text.hasPrefix("["), let end = text.firstIndex(of: "]") {
                table = String(text[text.index(after: text.startIndex)..<end])
                continue
            }
            let name = text.prefix { ("a"..."z").contains($0) || $0 == "_" }
            if !name.isEmpty, text.dropFirst(name.count).drop(while: { $0 == " " }).hasPrefix("=") {
                keys[table, default: []].insert(String(name))
            }
        }
        return keys
    }

    static func missing(_ keys: [String], from documented: Set<String>?) -> [String] {
        keys.filter { !(documented ?? []).contains($0) }
    }

    @Test("pinkeeper.toml(5) describes every key under the heading of each table that accepts it, and every bound under Limits")
    func manPage() throws {
        let tags = Self.manPageTags(try Self.read("docs/man/pinkeeper.toml.5"))
        let storeHeading = try #require(tags.keys.first { $0.hasPrefix("[stores.") }, "no [stores.id] section")
        #expect(Self.missing(ConfigLoader.topLevelKeys, from: tags["TOP-LEVEL KEYS"]).isEmpty)
        #expect(Self.missing(ConfigLoader.defaultsKeys, from: tags["[defaults]"]).isEmpty)
        #expect(Self.missing(StoreParser.keys, from: tags[storeHeading]).isEmpty)
        #expect(Self.missing(NumericKeys.all.map(\.name), from: tags["Limits"]).isEmpty)
    }

    @Test("etc/pinkeeper/pinkeeper.toml shows every top-level and [defaults] key, and no other")
    func mainExample() throws {
        let keys = Self.exampleKeys(try Self.read("etc/pinkeeper/pinkeeper.toml"))
        #expect(Self.missing(ConfigLoader.topLevelKeys, from: keys[""]).isEmpty)
        #expect(Self.missing(ConfigLoader.defaultsKeys, from: keys["defaults"]).isEmpty)
        #expect(Set(keys.keys).subtracting(["", "defaults"]).isEmpty, "tables: \(keys.keys.sorted())")
        #expect(Self.missing(Array(keys[""] ?? []), from: Set(ConfigLoader.topLevelKeys)).isEmpty, "not top-level keys")
        #expect(Self.missing(Array(keys["defaults"] ?? []), from: Set(ConfigLoader.defaultsKeys)).isEmpty, "not [defaults] keys")
    }

    @Test("etc/pinkeeper/stores.d/README's example store shows every key only a store sets, and only store keys")
    func storeExample() throws {
        let keys = Self.exampleKeys(try Self.read("etc/pinkeeper/stores.d/README"))
        let inStores = keys.filter { $0.key.hasPrefix("stores.") }.values.reduce(into: Set<String>()) { $0.formUnion($1) }
        #expect(Self.missing(StoreParser.ownKeys, from: inStores).isEmpty)
        #expect(Self.missing(Array(inStores), from: Set(StoreParser.keys)).isEmpty, "not store keys")
    }
}
