import Foundation
import Testing
@testable import PinKeeperDaemon

/// `on_change` and `hook_timeout`: inherited from `[defaults]`, overridden per store, checked at load.
@Suite("Change hook configuration")
struct HookConfigTests {
    private func load(defaults: String = "", store: String = "") throws -> ConfigFixture.Loaded {
        try ConfigTests.load(
            "[defaults]\n\(defaults)\n" + ConfigTests.store("banking", store),
            files: ["plain-file": "#!/bin/sh\n"])  // written without execute permission
    }

    @Test func noHookByDefault() throws {
        let policy = try load().config().stores[0].policy
        #expect(policy.onChange == nil)
        #expect(policy.hookTimeout == 30)
    }

    @Test func defaultsAreInheritedAndAStoreOverrides() throws {
        let inherited = try load(defaults: "on_change = [\"/bin/true\", \"a b\", \"\"]\nhook_timeout = \"2m\"")
        #expect(try inherited.config().stores[0].policy.onChange == ["/bin/true", "a b", ""])
        #expect(try inherited.config().stores[0].policy.hookTimeout == 120)
        let overridden = try load(defaults: "on_change = [\"/bin/true\"]", store: "on_change = [\"/bin/false\"]\nhook_timeout = 5")
        #expect(try overridden.config().stores[0].policy.onChange == ["/bin/false"])
        #expect(try overridden.config().stores[0].policy.hookTimeout == 5)
    }

    @Test(
        "a bad on_change names the file, store and key",
        arguments: [
            ("on_change = \"/bin/true\"", "non-empty array of strings"),  // a string would invite a shell
            ("on_change = []", "non-empty array of strings"),
            ("on_change = [\"/bin/true\", 3]", "non-empty array of strings"),
            ("on_change = [\"true\"]", "must be an absolute path"),
            ("on_change = [\"/nonexistent/reload-pins\"]", "is not an executable file"),
            ("on_change = [\"$DIR/plain-file\"]", "is not an executable file"),
            ("on_change = [\"/usr/bin\"]", "is not an executable file"),  // a directory passes access(X_OK)
        ])
    func badOnChange(line: String, fragment: String) throws {
        try ConfigTests.expectError(try load(store: line), store: "banking", key: "on_change", fragment)
        try ConfigTests.expectError(try load(defaults: line), store: nil, key: "on_change", fragment)
    }

    @Test(
        "a bad hook_timeout names the file, store and key",
        arguments: [
            "hook_timeout = 0", "hook_timeout = \"0s\"", "hook_timeout = \"11m\"", "hook_timeout = -1",
            "hook_timeout = \"soon\"", "hook_timeout = 1.5",
        ])
    func badTimeout(line: String) throws {
        try ConfigTests.expectError(try load(store: line), store: "banking", key: "hook_timeout", "from 1s to 10m")
    }

    @Test func aHookChangeAloneDoesNotRefetchOnReload() throws {
        let before = try load().config().stores[0]
        let after = try load(store: "on_change = [\"/bin/true\"]\nhook_timeout = 9").config().stores[0]
        #expect(after == before)
        let other = try load(store: "retry_min = \"45s\"").config().stores[0]
        #expect(other != before)
    }
}
