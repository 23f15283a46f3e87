import Foundation
import Glibc

/// A directory laid out and updated as kubelet's atomic writer does for a ConfigMap volume: the
/// files in `..<timestamp>/` (nested items in subdirectories), `..data` → that directory, and one
/// symlink per top-level entry (`pinkeeper.toml` → `..data/pinkeeper.toml`, `stores.d` →
/// `..data/stores.d`). An update writes a new timestamped directory, points `..data_tmp` at it,
/// renames `..data_tmp` over `..data` and then removes the old directory.
struct KubeletVolume {
    let directory: URL
    private(set) var version = 0

    /// `files`: relative paths (`stores.d/a.toml`) and contents.
    init(at directory: URL, files: [String: String]) throws {
        self.directory = directory
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let first = try write(files)
        try symlink("..data", to: first)
        for entry in Set(files.keys.map { String($0.split(separator: "/")[0]) }) {
            try symlink(entry, to: "..data/" + entry)
        }
    }

    var configPath: String { directory.appendingPathComponent("pinkeeper.toml").path }

    /// Swaps in a new version holding exactly `files` (the same top-level entries as before).
    mutating func update(_ files: [String: String]) throws {
        let old = try FileManager.default.destinationOfSymbolicLink(atPath: directory.appendingPathComponent("..data").path)
        let new = try write(files)
        try symlink("..data_tmp", to: new)
        guard rename(directory.appendingPathComponent("..data_tmp").path, directory.appendingPathComponent("..data").path) == 0 else {
            throw FixtureError("rename ..data_tmp: \(String(cString: strerror(errno)))")
        }
        try FileManager.default.removeItem(at: directory.appendingPathComponent(old))
    }

    /// A new `..<timestamp>` directory (mode 0755, files 0644, as kubelet's default mode).
    private mutating func write(_ files: [String: String]) throws -> String {
        version += 1
        let name = String(format: "..2026_11_22_03_00_%02d.%09d", version, version * 1_000)
        for (path, text) in files {
            let file = directory.appendingPathComponent(name).appendingPathComponent(path)
            try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
            try text.write(to: file, atomically: false, encoding: .utf8)
        }
        return name
    }

    private func symlink(_ name: String, to target: String) throws {
        try FileManager.default.createSymbolicLink(atPath: directory.appendingPathComponent(name).path, withDestinationPath: target)
    }
}
