import Foundation
import Glibc

/// A change hook written by a test: it records each run (argv, the variables it was given, and
/// whether another run of it was in progress) in `runs.log` beside it, then does `body`.
struct HookScript {
    let directory: URL
    var path: String { directory.appendingPathComponent("hook.sh").path }

    struct Run: Equatable {
        var fields: [String: String]
        subscript(key: String) -> String? { fields[key] }
    }

    init(in directory: URL, body: String = "") throws {
        self.directory = directory
        let root = directory.path
        let script = """
            #!/bin/sh
            mkdir '\(root)/running' 2>/dev/null || echo overlap >> '\(root)/overlaps'
            printf 'store=%s|file=%s|pins=%s|argc=%s|args=%s|notify=%s|secret=%s|path=%s|cwd=%s\\n' \
              "$PINKEEPER_STORE" "$PINKEEPER_CACHE_FILE" "$PINKEEPER_PINS" "$#" "$*" "${NOTIFY_SOCKET-unset}" \
              "${PINKEEPER_TEST_SECRET-unset}" "$PATH" "$(pwd)" >> '\(root)/runs.log'
            \(body)
            rmdir '\(root)/running'

            """
        try script.write(toFile: path, atomically: true, encoding: .utf8)
        chmod(path, 0o755)
    }

    /// `on_change` and `hook_timeout` lines for a store table.
    func keys(timeout: String = "10s", arguments: [String] = ["one", "two words"]) -> String {
        let argv = ([path] + arguments).map { "\"\($0)\"" }.joined(separator: ", ")
        return "on_change = [\(argv)]\nhook_timeout = \"\(timeout)\""
    }

    var runs: [Run] {
        let text = (try? String(contentsOf: directory.appendingPathComponent("runs.log"), encoding: .utf8)) ?? ""
        return text.split(separator: "\n").map { line in
            Run(
                fields: Dictionary(
                    line.split(separator: "|").map { part -> (String, String) in
                        let pair = part.split(separator: "=", maxSplits: 1)
                        return (String(pair[0]), pair.count > 1 ? String(pair[1]) : "")
                    }
                ) { $1 })
        }
    }

    var overlapped: Bool { FileManager.default.fileExists(atPath: directory.appendingPathComponent("overlaps").path) }

    /// Waits until `count` runs have been recorded (or `timeout` passed).
    func waitForRuns(_ count: Int, timeout: TimeInterval = 10) -> [Run] {
        let deadline = Date().addingTimeInterval(timeout)
        while runs.count < count && Date() < deadline { usleep(20_000) }
        return runs
    }
}
