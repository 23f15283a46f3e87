import Testing
@testable import PinKeeperDaemon

/// `authoritative`: in `[defaults]` or a store, challenge mode only.
@Suite("authoritative configuration")
struct AuthoritativeConfigTests {
    private func load(defaults: String = "", store: String = "", dropIns: [String: String] = [:]) throws -> ConfigFixture.Loaded {
        try ConfigTests.load("[defaults]\n\(defaults)\n" + ConfigTests.store("banking", store), dropIns: dropIns)
    }

    @Test func offByDefault() throws {
        #expect(try load().config().stores[0].policy.authoritative == false)
    }

    @Test func inheritedFromDefaultsAndOverriddenByAStore() throws {
        #expect(try load(defaults: "authoritative = true").config().stores[0].policy.authoritative)
        #expect(try load(defaults: "authoritative = true", store: "authoritative = false").config().stores[0].policy.authoritative == false)
        #expect(try load(store: "authoritative = true").config().stores[0].policy.authoritative)
    }

    @Test("a static store refuses it, naming the store and the key")
    func staticStoreRefusesIt() throws {
        try ConfigTests.expectError(
            try load(store: "mode = \"static\"\nauthoritative = true"), store: "banking", key: "authoritative",
            "needs mode = \"challenge\"")
    }

    @Test("[defaults] authoritative = true with a static store: the static store is named, with where the value came from")
    func defaultsWithAStaticStore() throws {
        let dropIn = ConfigTests.store("mirror", "mode = \"static\"")
        let loaded = try load(defaults: "authoritative = true", dropIns: ["mirror.toml": dropIn])
        try ConfigTests.expectError(
            loaded, file: loaded.dropIn("mirror.toml"), store: "mirror", key: "authoritative", "inherited from [defaults]")
        // The static store may opt out; the challenge store keeps the default.
        let optedOut = try load(defaults: "authoritative = true", dropIns: ["mirror.toml": dropIn + "authoritative = false\n"])
        let stores = try optedOut.config().stores
        #expect(stores.map(\.policy.authoritative) == [true, false])
    }

    @Test(arguments: ["authoritative = \"true\"", "authoritative = 1", "authoritative = []"])
    func onlyABoolean(line: String) throws {
        try ConfigTests.expectError(try load(store: line), store: "banking", key: "authoritative", "must be true or false")
        try ConfigTests.expectError(try load(defaults: line), store: nil, key: "authoritative", "must be true or false")
    }

    @Test("switching it makes a reload fetch the store again (the drop happens then)")
    func countsForAReload() throws {
        #expect(try load().config().stores[0] != (try load(store: "authoritative = true").config().stores[0]))
    }
}
