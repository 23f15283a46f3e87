import Foundation
import TestSupport

/// What only the daemon's tests need: the built binary, and the test CA and signing keys.
extension TestEnvironment {
    /// The `pinkeeper` executable built beside the test bundle.
    static var binary: String {
        let beside = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("pinkeeper")
        if FileManager.default.isExecutableFile(atPath: beside.path) { return beside.path }
        return packageRoot.appendingPathComponent(".build/debug/pinkeeper").path
    }

    /// A test CA, server certificates and signing keys, made once by the `openssl` CLI.
    static let certificates: URL = {
        let dir = packageRoot.appendingPathComponent(".build/test-ca")
        let result = ChildProcess.run("/bin/bash", [fixtures.appendingPathComponent("make-ca.sh").path, dir.path], timeout: 60)
        precondition(result.status == 0, "make-ca.sh failed: \(result.stderr)")
        return dir
    }()

    static func certificate(_ name: String) -> String { certificates.appendingPathComponent(name).path }

    static func signingKey(_ number: Int = 1) -> String { certificate(number == 1 ? "signing.key" : "signing\(number).key") }

    static func publicKey(_ number: Int = 1) -> String {
        let file = certificate(number == 1 ? "signing.pub.b64" : "signing\(number).pub.b64")
        return (try? String(contentsOfFile: file, encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
    }

    /// `Tests/Fixtures/NAME.c` as a shared object for LD_PRELOAD, built on first use (clang ships with Swift).
    static func preloadFixture(_ name: String) -> String {
        let dir = packageRoot.appendingPathComponent(".build/test-preload")
        try? FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let library = dir.appendingPathComponent("\(name).so").path
        let result = ChildProcess.run(
            "/usr/bin/env",
            [
                "clang", "-shared", "-fPIC", "-O1", "-o", library,
                fixtures.appendingPathComponent("\(name).c").path, "-ldl",
            ],
            timeout: 60)
        precondition(result.status == 0, "building \(name).so failed: \(result.stderr)")
        return library
    }
}
