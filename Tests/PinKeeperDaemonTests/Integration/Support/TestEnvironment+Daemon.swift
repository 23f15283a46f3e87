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

    /// A test CA, server certificates and signing keys, made once by the `openssl` CLI. Outside
    /// the clone, mode 0755: a daemon the tests run as another user reads `ca.pem`, and a clone
    /// in root's 0700 home (or a `mktemp -d` folder) is closed to it.
    static let certificates: URL = {
        let dir = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("pinkeeper-test-ca-\(geteuid())")
        var info = stat()
        if lstat(dir.path, &info) == 0, info.st_uid != geteuid() || info.st_mode & S_IFMT != S_IFDIR {
            preconditionFailure("\(dir.path) is not this user's directory: remove it")
        }
        let result = ChildProcess.run("/bin/bash", [fixtures.appendingPathComponent("make-ca.sh").path, dir.path], timeout: 60)
        precondition(result.status == 0, "make-ca.sh failed: \(result.stderr)")
        precondition(chmod(dir.path, 0o755) == 0, "chmod \(dir.path): \(errno)")
        return dir
    }()

    /// `binary`, copied where another user can run it (the tests that start the daemon as uid
    /// 4242 cannot enter a clone in a 0700 directory). Replaced by rename, so a test process
    /// never runs a half-copied file.
    static let binaryForOtherUsers: String = {
        let dir = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("pinkeeper-test-bin-\(geteuid())")
        try? FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        var info = stat()
        precondition(lstat(dir.path, &info) == 0 && info.st_uid == geteuid(), "\(dir.path) is not this user's directory: remove it")
        precondition(chmod(dir.path, 0o755) == 0, "chmod \(dir.path): \(errno)")
        let copy = dir.appendingPathComponent("pinkeeper").path, temporary = copy + ".\(getpid())"
        unlink(temporary)
        do {
            try FileManager.default.copyItem(atPath: binary, toPath: temporary)
        } catch {
            preconditionFailure("cannot copy \(binary) to \(temporary): \(error)")
        }
        precondition(chmod(temporary, 0o755) == 0 && rename(temporary, copy) == 0, "cannot put \(copy) in place: \(errno)")
        return copy
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
