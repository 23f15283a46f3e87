import Foundation
import PinKeeper
@testable import PinKeeperDaemon
import TestSupport
import Testing

/// `pinkeeper validate` as an operator runs it: every exit status, with fingerprints and
/// certificate files made by the `openssl` CLI.
@Suite("pinkeeper validate: fingerprints and certificate files")
struct ValidateCommandTests {
    static let server = TestEnvironment.certificate("server.pem")  // CN=localhost, signed by the test CA
    static let ca = TestEnvironment.certificate("ca.pem")
    static let wrongName = TestEnvironment.certificate("wrongname.pem")  // CN=wrong.invalid, signed by the test CA

    private func world(_ extra: String = "") throws -> ReaderWorld {
        let world = try ReaderWorld()
        try world.configure([.init(id: "banking", extra: extra)])
        return world
    }

    private func pin(_ name: String, _ pem: String, expires: Int64 = ReaderWorld.future, depth: Int = 0) -> Pin {
        Pin(name: name, fingerprint: OpenSSL.digest(pem: pem), expires: expires, depth: depth)
    }

    @Test("--fingerprint: 0 trusted, 1 untrusted, 2 empty; base64 or hex")
    func fingerprint() throws {
        let world = try world()
        try world.publish("banking", [pin("localhost", Self.server)])
        let base64 = OpenSSL.fingerprint(pem: Self.server)
        let hex = OpenSSL.shell("openssl x509 -in '\(Self.server)' -noout -fingerprint -sha256 | sed 's/.*=//'")

        let trusted = world.run("validate", ["--store", "banking", "--name", "localhost", "--fingerprint", base64])
        #expect(trusted.status == 0, "\(trusted.stderr)")
        #expect(trusted.stdout == "trusted\n")
        #expect(world.run("validate", ["--store", "banking", "--name", "localhost", "--fingerprint", hex]).status == 0)

        let other = OpenSSL.fingerprint(pem: Self.wrongName)
        let untrusted = world.run("validate", ["--store", "banking", "--name", "localhost", "--fingerprint", other])
        #expect(untrusted.status == 1)
        #expect(untrusted.stdout.hasPrefix("untrusted: store 'banking' pins 'localhost'"))

        let empty = world.run("validate", ["--store", "banking", "--name", "api.example.com", "--fingerprint", base64])
        #expect(empty.status == 2)
        #expect(empty.stdout.hasPrefix("empty: store 'banking' has no valid pin for 'api.example.com'"))
    }

    @Test("--depth: a fingerprint is checked against the pins of its position in the chain")
    func depth() throws {
        let world = try world()
        try world.publish("banking", [pin("localhost", Self.ca, depth: 1)])
        let caPrint = OpenSSL.fingerprint(pem: Self.ca)
        func run(_ depth: String) -> Int32 {
            world.run("validate", ["--store", "banking", "--name", "localhost", "--fingerprint", caPrint, "--depth", depth]).status
        }
        #expect(run("1") == 0)
        #expect(run("0") == 2)
        #expect(
            world.run(
                "validate",
                [
                    "--store", "banking", "--name", "localhost", "--fingerprint",
                    OpenSSL.fingerprint(pem: Self.server), "--depth", "1",
                ]
            ).status == 1)
    }

    @Test("--certificate: PEM and DER files of the pinned leaf are trusted, and each certificate is printed")
    func certificateFiles() throws {
        let world = try world()
        try world.publish("banking", [pin("localhost", Self.server)])
        let der = try world.file("server.der", OpenSSL.der(pem: Self.server))
        for file in [Self.server, der] {
            let result = world.run("validate", ["--store", "banking", "--name", "localhost", "--certificate", file])
            #expect(result.status == 0, "\(file): \(result.stderr)")
            #expect(result.stdout.contains("depth 0: CN=localhost  sha256 \(OpenSSL.fingerprint(pem: Self.server))"))
            #expect(result.stdout.hasPrefix("trusted\n"))
        }
        let unpinned = world.run("validate", ["--store", "banking", "--name", "localhost", "--certificate", Self.wrongName])
        #expect(unpinned.status == 1)
        #expect(
            unpinned.stdout.contains(
                "note: the leaf's common name 'wrong.invalid' differs from --name 'localhost': "
                    + "pins under either are compared"))
    }

    @Test("--certificate with a chain: depth is the position in the file, in PEM and in DER")
    func certificateChains() throws {
        let world = try world()
        let pemChain = try world.file(
            "chain.pem",
            try Data(contentsOf: URL(fileURLWithPath: Self.server))
                + Data(contentsOf: URL(fileURLWithPath: Self.ca)))
        let derChain = try world.file("chain.der", OpenSSL.der(pem: Self.server) + OpenSSL.der(pem: Self.ca))

        // Only the CA is pinned, at depth 1: the chain is trusted, the leaf alone is not.
        try world.publish("banking", [pin("localhost", Self.ca, depth: 1)])
        for file in [pemChain, derChain] {
            let result = world.run("validate", ["--store", "banking", "--name", "localhost", "--certificate", file])
            #expect(result.status == 0, "\(file): \(result.stdout)\(result.stderr)")
            #expect(result.stdout.contains("depth 1: CN=pinkeeper test CA  sha256 \(OpenSSL.fingerprint(pem: Self.ca))"))
        }
        #expect(world.run("validate", ["--store", "banking", "--name", "localhost", "--certificate", Self.server]).status == 2)

        // The CA pinned as a leaf (depth 0) does not vouch for the chain's leaf.
        try world.publish("banking", [pin("localhost", Self.ca)])
        #expect(world.run("validate", ["--store", "banking", "--name", "localhost", "--certificate", pemChain]).status == 1)
    }

    @Test("an expired pin is never trusted: the answer is empty")
    func expired() throws {
        let world = try world()
        try world.publish("banking", [pin("localhost", Self.server, expires: ReaderWorld.now - 10)])
        let result = world.run("validate", ["--store", "banking", "--name", "localhost", "--certificate", Self.server])
        #expect(result.status == 2)
    }

    @Test("no cache file yet: empty (2)")
    func noCacheFile() throws {
        let world = try world()
        let result = world.run(
            "validate",
            [
                "--store", "banking", "--name", "localhost", "--fingerprint",
                OpenSSL.fingerprint(pem: Self.server),
            ])
        #expect(result.status == 2, "\(result.stderr)")
    }

    @Test("fallback pins decide when the cache has none; expected_common_names rejects other names")
    func fallbackAndExpectedNames() throws {
        let world = try ReaderWorld()
        let fallback = try world.file(
            "fallback.json",
            Data(
                """
                {"fingerprints": [{"name": "localhost", "fingerprint": "\(OpenSSL.fingerprint(pem: Self.server))",
                  "expires": \(ReaderWorld.future), "signature": ""}]}
                """.utf8))
        try world.configure([.init(id: "banking", extra: "fallback_file = \"\(fallback)\"\nexpected_common_names = [\"localhost\"]")])
        let trusted = world.run("validate", ["--store", "banking", "--name", "localhost", "--certificate", Self.server])
        #expect(trusted.status == 0, "\(trusted.stdout)\(trusted.stderr)")

        let print = OpenSSL.fingerprint(pem: Self.wrongName)
        try world.publish(
            "banking", [Pin(name: "wrong.invalid", fingerprint: Array(Data(base64Encoded: print)!), expires: ReaderWorld.future)])
        let outside = world.run("validate", ["--store", "banking", "--name", "wrong.invalid", "--fingerprint", print])
        #expect(outside.status == 1)
        #expect(outside.stdout.contains("not among the expected_common_names"))
    }

    @Test("domainsConfig: a name that needs no pinning is trusted")
    func domainsConfig() throws {
        let world = try world()
        try world.publish(
            "banking", [pin("localhost", Self.server)],
            domainsConfig: DomainsConfig(
                sslPinningRequiredForUnlisted: false,
                domains: [.init(name: "localhost", sslPinningRequired: true)]))
        let other = OpenSSL.fingerprint(pem: Self.wrongName)
        #expect(world.run("validate", ["--store", "banking", "--name", "static.example.com", "--fingerprint", other]).status == 0)
        #expect(world.run("validate", ["--store", "banking", "--name", "localhost", "--fingerprint", other]).status == 1)
    }

    @Test(
        "usage errors exit 64",
        arguments: [
            ["--store", "banking", "--name", "localhost"],
            ["--store", "banking", "--name", "localhost", "--fingerprint", "AAAA", "--connect", "localhost"],
            ["--store", "banking", "--name", "localhost", "--fingerprint", "not base64"],
            ["--store", "banking", "--name", "localhost", "--fingerprint", "AAAA"],
            ["--store", "banking", "--name", "localhost", "--certificate", "/etc/hostname", "--depth", "1"],
            ["--store", "banking", "--name", "localhost", "--connect", "localhost:http"],
            ["--store", "banking", "--fingerprint", "nu1DOBz31Y5FY6lRNkJV/HdnB6BDVCp7mX0nxkbub7Y="],
            ["--store", "nosuchstore", "--name", "localhost", "--fingerprint", "nu1DOBz31Y5FY6lRNkJV/HdnB6BDVCp7mX0nxkbub7Y="],
        ])
    func usage(arguments: [String]) throws {
        let world = try world()
        let result = world.run("validate", arguments)
        #expect(result.status == 64, "\(arguments): \(result.stderr)")
        #expect(!result.stderr.isEmpty)
        #expect(!result.stderr.contains("Fatal error"))
    }

    @Test("a missing certificate file exits 66; one that is not a certificate exits 65")
    func certificateFileErrors() throws {
        let world = try world()
        let missing = world.run("validate", ["--store", "banking", "--name", "localhost", "--certificate", world.root.path + "/none.pem"])
        #expect(missing.status == 66)
        #expect(missing.stderr.contains("none.pem does not exist"))
        let garbage = try world.file("garbage.pem", Data("-----BEGIN CERTIFICATE-----\nnot base64!\n-----END CERTIFICATE-----\n".utf8))
        let bad = world.run("validate", ["--store", "banking", "--name", "localhost", "--certificate", garbage])
        #expect(bad.status == 65)
        #expect(bad.stderr.contains("garbage.pem"))
    }

    @Test("a corrupt cache file exits 65, an unreadable one 74, an invalid configuration 78")
    func cacheAndConfigErrors() throws {
        let world = try world()
        let cacheFile = world.cache.appendingPathComponent("banking.json")
        try Data("{\"fingerprints\": [".utf8).write(to: cacheFile)
        let arguments = ["--store", "banking", "--name", "localhost", "--fingerprint", OpenSSL.fingerprint(pem: Self.server)]
        let corrupt = world.run("validate", arguments)
        #expect(corrupt.status == 65)
        #expect(corrupt.stderr.contains(cacheFile.path))
        #expect(FileManager.default.fileExists(atPath: cacheFile.path))  // a reader never moves files

        try FileManager.default.removeItem(at: cacheFile)
        try FileManager.default.createDirectory(at: cacheFile, withIntermediateDirectories: false)
        #expect(world.run("validate", arguments).status == 74)

        try world.configure([.init(id: "banking", extra: "colour = \"blue\"")])
        let config = world.run("validate", arguments)
        #expect(config.status == 78)
        #expect(config.stderr.contains("colour"))
    }
}
