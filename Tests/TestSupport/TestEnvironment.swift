package import Foundation

/// Where things are when tests run: the package root, the fixtures, a fresh directory per test.
/// Each test target adds what only it needs (the daemon's tests: the built binary, the test CA).
package enum TestEnvironment {
    /// Found from this file's path, so tests run from any directory.
    package static let packageRoot: URL = {
        var dir = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        while !FileManager.default.fileExists(atPath: dir.appendingPathComponent("Package.swift").path) {
            dir.deleteLastPathComponent()
        }
        return dir
    }()

    package static var fixtures: URL { packageRoot.appendingPathComponent("Tests/Fixtures") }

    /// A fresh directory for one test, removed by the caller.
    package static func temporaryDirectory(_ label: String) -> URL {
        let dir = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("pinkeeper-\(label)-\(UUID().uuidString.prefix(8))")
        try? FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        return dir
    }
}
