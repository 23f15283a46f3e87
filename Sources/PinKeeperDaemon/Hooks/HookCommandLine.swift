/// What root checks in a hook's command line before it runs it (`HookTrust` checks each path):
/// the configuration files that name the hook, the program, every path an argument names, and
/// that no argument hands a shell or an interpreter code to run (`HookInterpreters`).
enum HookCommandLine {
    /// Where a hook starts (`SpawnExtras.changeDirectory`): relative paths are resolved from here.
    static let workingDirectory = "/"

    /// Why root must not run `argv`, or nil when nobody but root decides what it runs.
    static func problem(argv: [String], configurationFiles: [String]) -> String? {
        for file in configurationFiles {
            if let problem = HookTrust.problem(file, role: .configuration) { return "the configuration file \(file): \(problem)" }
        }
        guard let program = argv.first else { return "the hook names no program" }
        if let problem = HookTrust.problem(program) { return problem }
        if looksUpPath(program) { return "\(program) finds its program through PATH: name the program's absolute path" }
        if let problem = HookInterpreters.problem(program: program, arguments: Array(argv.dropFirst())) { return problem }
        for argument in argv.dropFirst() {
            for path in paths(in: argument) {
                guard let problem = HookTrust.problem(path, role: .argument) else { continue }
                // A relative argument is shown with the path it names from the working directory.
                let relative = !argument.hasPrefix("/") && path == workingDirectory + argument
                let shown = relative ? "\(argument) (\(path) from the hook's working directory \(workingDirectory))" : argument
                return "its argument \(shown): \(problem)"
            }
        }
        return nil
    }

    /// `env` runs a program it looks up in PATH (`env NAME=value` and options aside).
    static func looksUpPath(_ program: String) -> Bool { baseName(program) == "env" }

    static func baseName(_ path: String) -> String {
        path.unicodeScalars.split(separator: "/").last.map { String(String.UnicodeScalarView($0)) } ?? path
    }

    /// Every path `argument` may name: itself (relative to the working directory when it does
    /// not start with `/`), and each absolute path inside it after `=`, `:`, `,` or `@`, or right
    /// after a short option (`--config=/etc/app.conf`, `-I/usr/lib/app`, `PATH=/a:/b`).
    static func paths(in argument: String) -> [String] {
        var found = [argument.hasPrefix("/") ? argument : workingDirectory + argument]
        let scalars = Array(argument.unicodeScalars)
        for index in scalars.indices.dropFirst() where scalars[index] == "/" {
            let before = scalars[index - 1]
            let afterShortOption = index == 2 && scalars[0] == "-" && before != "-"
            guard afterShortOption || "=:,@".unicodeScalars.contains(before) else { continue }
            let end = scalars[index...].firstIndex { " \t\n:,;'\"".unicodeScalars.contains($0) } ?? scalars.endIndex
            var view = String.UnicodeScalarView()
            view.append(contentsOf: scalars[index..<end])
            let path = String(view)
            if !found.contains(path) { found.append(path) }
        }
        return found
    }
}
