import Foundation
import PinKeeper
@testable import PinKeeperDaemon
import TestSupport
import Testing

/// The cache file as an interface: real files published by the daemon (libcurl, the loopback
/// pinning service, signature checks) are checked against docs/cache.schema.json with Python's
/// `jsonschema`, and read by the two example readers that do not use pinkeeper at all.
@Suite("Cache contract: JSON Schema and the example readers")
struct CacheContractTests {
    static let schema = TestEnvironment.packageRoot.appendingPathComponent("docs/cache.schema.json").path
    static let python = TestEnvironment.packageRoot.appendingPathComponent("docs/examples/python/validate.py").path
    static let shell = TestEnvironment.packageRoot.appendingPathComponent("docs/examples/shell/validate.sh").path

    /// Three stores updated by the real updater: challenge mode with depth and a short-lived pin,
    /// challenge mode with domainsConfig, and a static list with per-entry signatures; plus a
    /// fourth static store whose file was then altered to carry domainsConfig and a depth,
    /// which a static list does not sign.
    final class Published: @unchecked Sendable {  // built once, then only read
        let sandbox: Sandbox
        let server: FixtureServer
        let shortExpiry: Int64
        var banking: String { sandbox.cacheFile("banking").path }
        var domains: String { sandbox.cacheFile("domains").path }
        var statics: String { sandbox.cacheFile("static").path }
        var tampered: String { sandbox.cacheFile("tampered").path }

        init() async throws {
            sandbox = try Sandbox()
            server = try FixtureServer()
            shortExpiry = Int64(Date().timeIntervalSince1970) + 100_000
            try server.route(
                "banking",
                Lists.route(entries: [
                    Lists.entry("api.example.com", 1), Lists.entry("api.example.com", 2, expires: shortExpiry),
                    Lists.entry("cdn.example.com", 3, extra: ["depth": 1]), Lists.entry("old.example.com", 4, expires: 1_000),
                ]))
            try server.route(
                "domains",
                Lists.route(
                    entries: [Lists.entry("api.example.com", 5)],
                    extra: [
                        "domainsConfig": [
                            "sslPinningRequiredForUnlisted": false,
                            "domains": [["name": "api.example.com", "sslPinningRequired": true]],
                        ]
                    ]))
            try server.route("static", Lists.route(mode: "static", entries: [Lists.entry("cdn.example.com", 7)]))
            try server.route("tampered", Lists.route(mode: "static", entries: [Lists.entry("cdn.example.com", 7)]))
            let updater = sandbox.updater()
            for (id, mode) in [
                ("banking", ListMode.challenge), ("domains", .challenge), ("static", .static),
                ("tampered", .static),
            ] {
                let report = await updater.update(try sandbox.store(id, url: server.url(id), mode: mode))
                guard report.result == .ok else { throw FixtureError("updating \(id) failed: \(report.reason ?? "")") }
            }
            var document = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: tampered))) as? [String: Any] ?? [:]
            document["domainsConfig"] = ["sslPinningRequiredForUnlisted": false, "domains": [] as [Any]]
            document["fingerprints"] =
                (document["fingerprints"] as? [[String: Any]] ?? [])
                + [Lists.entry("cdn.example.com", 8, extra: ["depth": 1])]
            try JSONSerialization.data(withJSONObject: document).write(to: URL(fileURLWithPath: tampered))
        }
    }

    private func python(_ code: String, _ arguments: [String]) -> ChildProcess.Result {
        ChildProcess.run("/usr/bin/env", ["python3", "-c", code] + arguments, timeout: 60)
    }

    // MARK: Schema

    static let validator = """
        import json, sys
        try:
            import jsonschema
        except ImportError:
            sys.exit("the Python package jsonschema is missing: python3 -m pip install jsonschema")
        schema = json.load(open(sys.argv[1]))
        jsonschema.Draft202012Validator.check_schema(schema)
        validator = jsonschema.Draft202012Validator(schema)
        for path in sys.argv[2:]:
            errors = sorted(validator.iter_errors(json.load(open(path))), key=lambda e: list(e.path))
            print("ok" if not errors else "invalid: " + "/".join(map(str, errors[0].path)))
        """

    @Test("the schema is valid draft 2020-12, and every published file conforms")
    func realFilesConform() async throws {
        let published = try await Published()
        let result = python(Self.validator, [Self.schema, published.banking, published.domains, published.statics])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == "ok\nok\nok\n")

        // The files really carry what the schema describes as optional.
        let banking = try String(contentsOfFile: published.banking, encoding: .utf8)
        #expect(banking.contains("\"depth\": 1"))
        #expect(!banking.contains("old.example.com"))  // expired on arrival: never published
        #expect(try String(contentsOfFile: published.domains, encoding: .utf8).contains("\"domainsConfig\""))
        let statics = try String(contentsOfFile: published.statics, encoding: .utf8)
        #expect(statics.contains("\"signature\"") && statics.contains(#""mode": "static""#))
        #expect(banking.contains(#""key": ""#) && banking.contains(#""mode": "challenge""#))
    }

    @Test("the schema rejects what a reader could misread")
    func schemaRejects() async throws {
        let published = try await Published()
        let original = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: published.banking))) as? [String: Any])
        let directory = TestEnvironment.temporaryDirectory("schema")
        defer { try? FileManager.default.removeItem(at: directory) }

        func entry(_ change: (inout [String: Any]) -> Void) -> [String: Any] {
            var document = original
            var entries = document["fingerprints"] as? [[String: Any]] ?? []
            change(&entries[0])
            document["fingerprints"] = entries
            return document
        }
        func meta(_ change: (inout [String: Any]) -> Void) -> [String: Any] {
            var document = original
            var metadata = document["pinkeeper"] as? [String: Any] ?? [:]
            change(&metadata)
            document["pinkeeper"] = metadata
            return document
        }
        let statics = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: published.statics))) as? [String: Any])
        func staticEntry(_ change: (inout [String: Any]) -> Void) -> [String: Any] {
            var document = statics
            var entries = document["fingerprints"] as? [[String: Any]] ?? []
            change(&entries[0])
            document["fingerprints"] = entries
            return document
        }
        let broken: [(String, [String: Any])] = [
            ("mode-unknown", meta { $0["mode"] = "dynamic" }),
            ("key-not-an-id", entry { $0["key"] = "signing key 1" }),
            (
                "static-with-domainsConfig",
                statics.merging(["domainsConfig": ["sslPinningRequiredForUnlisted": false, "domains": []]]) { $1 }
            ),
            ("static-with-depth", staticEntry { $0["depth"] = 1 }),
            ("fingerprint-not-base64", entry { $0["fingerprint"] = "not a digest" }),
            ("fingerprint-too-short", entry { $0["fingerprint"] = Data(repeating: 1, count: 20).base64EncodedString() }),
            ("fingerprint-url-safe", entry { $0["fingerprint"] = "_-" + String(($0["fingerprint"] as? String ?? "").dropFirst(2)) }),
            ("expires-string", entry { $0["expires"] = "2030-01-01" }),
            ("expires-fraction", entry { $0["expires"] = 1.5 }),
            ("depth-zero", entry { $0["depth"] = 0 }),
            ("name-missing", entry { $0["name"] = nil }),
            ("format-2", meta { $0["format"] = 2 }),
            ("store-path", meta { $0["store"] = "../etc" }),
            ("source-http", meta { $0["source"] = "http://pins.example.com" }),
            ("no-metadata", original.filter { $0.key != "pinkeeper" }),
            ("domains-flag-string", original.merging(["domainsConfig": ["sslPinningRequiredForUnlisted": "no", "domains": []]]) { $1 }),
        ]
        var files: [String] = []
        for (name, document) in broken {
            let url = directory.appendingPathComponent("\(name).json")
            try JSONSerialization.data(withJSONObject: document).write(to: url)
            files.append(url.path)
        }
        let result = python(Self.validator, [Self.schema] + files)
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stdout.split(separator: "\n")
        #expect(lines.count == broken.count)
        for (line, (name, _)) in zip(lines, broken) {
            #expect(line.hasPrefix("invalid"), "\(name) was accepted")
        }
    }

    // MARK: Example readers

    struct Query {
        var file: KeyPath<Published, String>
        var name: String
        var byte: UInt8
        var depth = 0
        var now: Int64?
        var expected: Int32
    }

    static var queries: [Query] {
        [
            Query(file: \.banking, name: "api.example.com", byte: 1, expected: 0),
            Query(file: \.banking, name: "api.example.com", byte: 2, expected: 0),
            Query(file: \.banking, name: "api.example.com", byte: 9, expected: 1),
            Query(file: \.banking, name: "www.example.com", byte: 1, expected: 2),
            Query(file: \.banking, name: "API.example.com", byte: 1, expected: 0),  // ASCII letters fold
            Query(file: \.banking, name: "api.ex\u{C0}mple.com", byte: 1, expected: 2),  // nothing else folds
            Query(file: \.banking, name: "cdn.example.com", byte: 3, depth: 1, expected: 0),
            Query(file: \.banking, name: "cdn.example.com", byte: 3, expected: 2),
            Query(file: \.banking, name: "cdn.example.com", byte: 8, depth: 1, expected: 1),
            Query(file: \.domains, name: "static.example.com", byte: 9, expected: 0),
            Query(file: \.domains, name: "api.example.com", byte: 9, expected: 1),
            Query(file: \.domains, name: "api.example.com", byte: 5, expected: 0),
            Query(file: \.statics, name: "cdn.example.com", byte: 7, expected: 0),
            // Static mode: the added domainsConfig and depth entry decide nothing.
            Query(file: \.tampered, name: "unlisted.example.com", byte: 9, expected: 2),
            Query(file: \.tampered, name: "cdn.example.com", byte: 8, depth: 1, expected: 2),
            Query(file: \.tampered, name: "cdn.example.com", byte: 7, expected: 0),
        ]
    }

    private func runExamples(_ query: Query, _ published: Published) -> (python: ChildProcess.Result, shell: ChildProcess.Result) {
        let file = published[keyPath: query.file]
        let fingerprint = Lists.fingerprint(query.byte)
        var pythonArguments = [Self.python, "--depth", "\(query.depth)"]
        var shellArguments = [Self.shell, "-d", "\(query.depth)"]
        if let now = query.now {
            pythonArguments += ["--now", "\(now)"]
            shellArguments += ["-t", "\(now)"]
        }
        return (
            ChildProcess.run("/usr/bin/env", ["python3"] + pythonArguments + [file, query.name, fingerprint], timeout: 30),
            ChildProcess.run("/bin/bash", shellArguments + [file, query.name, fingerprint], timeout: 30)
        )
    }

    @Test("Python and jq readers give pinkeeper's answers on real cache files")
    func examplesAgreeWithPinkeeper() async throws {
        let published = try await Published()
        let world = try ReaderWorld()
        var config =
            "cache_directory = \"\(published.sandbox.cache.path)\"\nstate_directory = \"\(published.sandbox.state.path)\"\n"
            + Sandbox.userLine
        for id in ["banking", "domains", "static", "tampered"] {
            config += "[stores.\(id)]\nurl = \"https://pins.example.com/\(id)\"\npublic_key = \"\(TestEnvironment.publicKey(1))\"\n"
        }
        try config.write(to: world.config, atomically: true, encoding: .utf8)
        let names: [KeyPath<Published, String>: String] = [
            \.banking: "banking", \.domains: "domains", \.statics: "static",
            \.tampered: "tampered",
        ]

        for query in Self.queries {
            let label = "\(names[query.file] ?? "?") \(query.name) #\(query.byte) depth \(query.depth)"
            let (python, shell) = runExamples(query, published)
            let answer = ["trusted\n", "untrusted\n", "empty\n"][Int(query.expected)]
            #expect(python.status == query.expected, "python: \(label): \(python.stdout)\(python.stderr)")
            #expect(python.stdout == answer, "python: \(label)")
            #expect(shell.status == query.expected, "shell: \(label): \(shell.stdout)\(shell.stderr)")
            #expect(shell.stdout == answer, "shell: \(label)")
            let pinkeeper = world.run(
                "validate",
                [
                    "--store", names[query.file] ?? "", "--name", query.name,
                    "--fingerprint", Lists.fingerprint(query.byte), "--depth", "\(query.depth)",
                ])
            #expect(pinkeeper.status == query.expected, "pinkeeper: \(label): \(pinkeeper.stdout)\(pinkeeper.stderr)")
        }
    }

    @Test("expiry: both readers stop trusting a pin after its expires second")
    func examplesHonourExpiry() async throws {
        let published = try await Published()
        let cases = [
            // Pin 2 lives through shortExpiry; afterwards pin 1 still counts as an attempt.
            Query(file: \.banking, name: "api.example.com", byte: 2, now: published.shortExpiry, expected: 0),
            Query(file: \.banking, name: "api.example.com", byte: 2, now: published.shortExpiry + 1, expected: 1),
            // Once every pin of the name has expired the answer is empty, even for a formerly pinned certificate.
            Query(file: \.banking, name: "api.example.com", byte: 1, now: Lists.future + 1, expected: 2),
        ]
        for query in cases {
            let (python, shell) = runExamples(query, published)
            #expect(python.status == query.expected, "python at \(query.now ?? 0): \(python.stdout)\(python.stderr)")
            #expect(shell.status == query.expected, "shell at \(query.now ?? 0): \(shell.stdout)\(shell.stderr)")
        }
    }

    @Test("the Python reader: fallback pins and expected names, as pinkeeper uses them")
    func pythonFallbackAndExpectedNames() async throws {
        let published = try await Published()
        let directory = TestEnvironment.temporaryDirectory("fallback")
        defer { try? FileManager.default.removeItem(at: directory) }
        let fallback = directory.appendingPathComponent("fallback.json")
        try Data(
            """
            {"fingerprints": [{"name": "api.example.com", "fingerprint": "\(Lists.fingerprint(6))",\
             "expires": \(Lists.future), "signature": ""}]}
            """.utf8
        ).write(to: fallback)
        func run(_ arguments: [String]) -> Int32 {
            ChildProcess.run("/usr/bin/env", ["python3", Self.python] + arguments, timeout: 30).status
        }
        #expect(run([published.banking, "api.example.com", Lists.fingerprint(6)]) == 1)
        #expect(run(["--fallback", fallback.path, published.banking, "api.example.com", Lists.fingerprint(6)]) == 0)
        #expect(run(["--expected-name", "cdn.example.com", published.banking, "api.example.com", Lists.fingerprint(1)]) == 1)
        #expect(run(["--expected-name", "api.example.com", published.banking, "api.example.com", Lists.fingerprint(1)]) == 0)
        // The operator's expected names come before the server's domainsConfig, which leaves
        // static.example.com unpinned: the server cannot widen the operator's list.
        #expect(run(["--expected-name", "api.example.com", published.domains, "static.example.com", Lists.fingerprint(9)]) == 1)
    }

    @Test("the Python reader refuses a FIFO or symlink planted at the cache path at once; a fallback may be a symlink")
    func pythonRefusesPlantedFiles() async throws {
        let published = try await Published()
        let directory = TestEnvironment.temporaryDirectory("planted")
        defer { try? FileManager.default.removeItem(at: directory) }
        let fifo = directory.appendingPathComponent("banking.json").path
        #expect(mkfifo(fifo, 0o644) == 0)
        let link = directory.appendingPathComponent("link.json").path
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: published.banking)
        func run(_ arguments: [String]) -> ChildProcess.Result {
            // Far longer than refusing takes; a reader that waits for a writer runs into it.
            ChildProcess.run("/usr/bin/env", ["python3", Self.python] + arguments, timeout: 15)
        }

        let fromFIFO = run([fifo, "api.example.com", Lists.fingerprint(1)])
        #expect(!fromFIFO.timedOut, "validate.py waited on a FIFO")
        #expect(fromFIFO.status == 66 && fromFIFO.stderr.contains("not a regular file"), "\(fromFIFO.status) \(fromFIFO.stderr)")
        let fromLink = run([link, "api.example.com", Lists.fingerprint(1)])
        #expect(fromLink.status == 66 && fromLink.stderr.contains("symlink"), "\(fromLink.status) \(fromLink.stderr)")
        let fallbackFIFO = run(["--fallback", fifo, published.banking, "api.example.com", Lists.fingerprint(1)])
        #expect(!fallbackFIFO.timedOut && fallbackFIFO.status == 66, "\(fallbackFIFO.status) \(fallbackFIFO.stderr)")
        // The fallback file is configuration: a symlink to a list is followed.
        let fallbackLink = run(["--fallback", link, published.statics, "api.example.com", Lists.fingerprint(1)])
        #expect(fallbackLink.status == 0, "\(fallbackLink.status) \(fallbackLink.stderr)")
    }

    @Test("both readers: 64 usage, 65 not a cache file, 66 unreadable")
    func exampleErrors() async throws {
        let directory = TestEnvironment.temporaryDirectory("examples")
        defer { try? FileManager.default.removeItem(at: directory) }
        let plainList = directory.appendingPathComponent("list.json")
        try Data("{\"fingerprints\": []}".utf8).write(to: plainList)
        let notJSON = directory.appendingPathComponent("notjson.json")
        try Data("fingerprints".utf8).write(to: notJSON)
        let good = Lists.fingerprint(1)
        let cases: [([String], Int32)] = [
            ([plainList.path, "a", "not-a-fingerprint"], 64),
            ([plainList.path, "a"], 64),
            ([plainList.path, "a", good], 65),
            ([notJSON.path, "a", good], 65),
            ([directory.appendingPathComponent("missing.json").path, "a", good], 66),
        ]
        for (arguments, expected) in cases {
            let python = ChildProcess.run("/usr/bin/env", ["python3", Self.python] + arguments, timeout: 30)
            #expect(python.status == expected, "python \(arguments): \(python.stderr)")
            let shell = ChildProcess.run("/bin/bash", [Self.shell] + arguments, timeout: 30)
            #expect(shell.status == expected, "shell \(arguments): \(shell.stderr)")
        }
    }
}
