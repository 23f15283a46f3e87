import Foundation
import TestSupport
import Testing

/// libcurl (and the ~30 shared objects it needs) is loaded by the first fetch, not at start: the
/// commands that only read the configuration or the cache never map it.
@Suite("libcurl loaded only by commands that fetch")
struct LazyCurlTests {
    /// Runs pinkeeper with the dynamic loader's file log (`LD_DEBUG=files`) and answers whether
    /// libcurl was loaded, with the run's exit status.
    private func run(_ arguments: [String], sandbox: Sandbox) throws -> (status: Int32, loadedCurl: Bool) {
        let log = sandbox.root.appendingPathComponent("ld-\(UUID().uuidString)").path
        var environment = ProcessInfo.processInfo.environment
        environment["LD_DEBUG"] = "files"
        environment["LD_DEBUG_OUTPUT"] = log
        let result = ChildProcess.run(TestEnvironment.binary, arguments, environment: environment, timeout: 30)
        // The loader writes LOG.PID; a fork (hooks) could write more than one.
        let prefix = URL(fileURLWithPath: log).lastPathComponent + "."
        let files = try FileManager.default.contentsOfDirectory(atPath: sandbox.root.path).filter { $0.hasPrefix(prefix) }
        #expect(!files.isEmpty, "the dynamic loader wrote no LD_DEBUG log")
        let text = try files.map { try String(contentsOfFile: sandbox.root.appendingPathComponent($0).path, encoding: .utf8) }.joined()
        return (result.status, text.contains("file=libcurl.so.4"))
    }

    /// A libcurl that cannot be loaded fails each fetch with a reason naming it and what to
    /// install; the published pins stay, and the commands that do not fetch work as before
    /// (with libcurl linked, none of them started).
    @Test("an unloadable libcurl: update fails naming it, the other commands still work")
    func unloadableCurl() throws {
        let server = try FixtureServer(), sandbox = try Sandbox()
        try server.route("a", Lists.route(entries: [Lists.entry("api.example.com", 1)]))
        let config = try sandbox.writeConfig([("a", server.url("a"), "challenge")])
        #expect(ChildProcess.run(TestEnvironment.binary, ["update", "--config", config], timeout: 30).status == 0)

        // The loader searches LD_LIBRARY_PATH first, and stops at a file that is not a library.
        let broken = sandbox.root.appendingPathComponent("broken-lib")
        try FileManager.default.createDirectory(at: broken, withIntermediateDirectories: true)
        try "not a shared object\n".write(to: broken.appendingPathComponent("libcurl.so.4"), atomically: true, encoding: .utf8)
        var environment = ProcessInfo.processInfo.environment
        environment["LD_LIBRARY_PATH"] = broken.path
        func pinkeeper(_ arguments: [String]) -> ChildProcess.Result {
            ChildProcess.run(TestEnvironment.binary, arguments + ["--config", config], environment: environment, timeout: 30)
        }

        let update = pinkeeper(["update", "--force"])
        #expect(update.status == 1)
        #expect(update.stdout.hasPrefix("a network-error pins=1"), "\(update.stdout)")
        #expect(update.stdout.contains("cannot load libcurl ("), "\(update.stdout)")
        // dlopen's own reason (it names the file), not "(null)" from a second dlerror() call.
        #expect(update.stdout.contains("broken-lib/libcurl.so.4: "), "\(update.stdout)")
        #expect(!update.stdout.contains("(null)"), "\(update.stdout)")
        #expect(update.stdout.contains("install libcurl4"), "\(update.stdout)")

        let validate = pinkeeper(["validate", "--store", "a", "--name", "api.example.com", "--fingerprint", Lists.fingerprint(1)])
        #expect(validate.status == 0, "\(validate.stderr)")
        #expect(pinkeeper(["check-config"]).status == 0)
        #expect([0, 1].contains(pinkeeper(["status"]).status))
    }

    @Test("check-config, status and validate do not load libcurl; update does, and fetches")
    func onlyFetchingCommandsLoadCurl() throws {
        let server = try FixtureServer(), sandbox = try Sandbox()
        try server.route("a", Lists.route(entries: [Lists.entry("api.example.com", 1)]))
        let config = try sandbox.writeConfig([("a", server.url("a"), "challenge")])

        let update = try run(["update", "--config", config], sandbox: sandbox)
        #expect(update.status == 0)
        #expect(update.loadedCurl)

        let fingerprint = String(repeating: "A", count: 43) + "="
        for arguments in [
            ["check-config"], ["status"],
            ["validate", "--store", "a", "--name", "api.example.com", "--fingerprint", fingerprint],
        ] {
            let other = try run(arguments + ["--config", config], sandbox: sandbox)
            #expect([0, 1].contains(other.status), "\(arguments)")
            #expect(!other.loadedCurl, "\(arguments[0]) loaded libcurl")
        }
    }
}
