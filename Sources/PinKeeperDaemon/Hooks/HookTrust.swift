import Glibc

/// Run as root (`sudo pinkeeper update` or `import`, outside the unit's sandbox), a change hook
/// is a way to root for anyone who can change the program it runs. So, as OpenSSH's
/// StrictModes does for key files, root runs a hook only when nobody else can change what
/// `posix_spawn` would execute: the path is resolved as the kernel resolves it (the configured
/// path is absolute, no PATH search), and
/// - every directory passed through, `/` included and those reached through symlinks, is owned
///   by root and not writable by its group or others, unless it is sticky (`/tmp`);
/// - every symlink followed is owned by root (in a sticky directory its owner could replace it);
/// - the program is a regular file owned by root and not writable by its group or others;
/// - a script's `#!` interpreter passes the same check (it runs as root too), to the kernel's
///   depth of nested interpreters.
/// Since everything on the way is root's, the check cannot be raced: nobody else can swap a
/// part between the check and the spawn.
enum HookTrust {
    static var runningAsRoot: Bool { geteuid() == 0 }

    /// The kernel's limits: symlinks followed in one lookup, and nested `#!` interpreters.
    static let symlinkLimit = 40
    static let interpreterLimit = 4

    /// Why root must not run the hook `argv`, or nil when only root can change what it runs: the
    /// program, and every argument naming an existing file (`/bin/sh /srv/app/hook.sh` runs the
    /// script as root just the same). `env` is refused: it finds its program through PATH,
    /// whose directories (`/usr/local/bin`, group `staff`) root does not vouch for here.
    static func problem(argv: [String]) -> String? {
        guard let program = argv.first else { return "the hook names no program" }
        if let problem = problem(program) { return problem }
        if looksUpPath(program) { return "\(program) finds its program through PATH: name the program's absolute path" }
        for argument in argv.dropFirst() where argument.hasPrefix("/") && access(argument, F_OK) == 0 {
            if let problem = problem(argument) { return "its argument \(argument): \(problem)" }
        }
        return nil
    }

    /// `env` runs a program it looks up in PATH (`env NAME=value` and options aside).
    private static func looksUpPath(_ program: String) -> Bool {
        program.unicodeScalars.split(separator: "/").last.map { String(String.UnicodeScalarView($0)) } == "env"
    }

    /// Why root must not run `program`, or nil when only root can change it.
    static func problem(_ program: String, interpreters: Int = 0) -> String? {
        guard program.hasPrefix("/") else { return "\(program) is not an absolute path" }
        if let problem = directoryProblem("/") { return problem }
        var pending = parts(program)
        var current = ""  // the resolved path so far, "" for "/"
        var links = 0
        while !pending.isEmpty {
            let name = pending.removeFirst()
            if name == "." { continue }
            if name == ".." {
                let scalars = current.unicodeScalars
                current = String(scalars[..<(scalars.lastIndex(of: "/") ?? scalars.startIndex)])
                continue
            }
            let path = current + "/" + name
            var info = stat()
            guard lstat(path, &info) == 0 else { return "\(path) cannot be examined: \(String(cString: strerror(errno)))" }
            switch info.st_mode & S_IFMT {
            case S_IFLNK:
                links += 1
                guard links <= symlinkLimit else { return "\(program) leads through more than \(symlinkLimit) symlinks" }
                guard info.st_uid == 0 else { return "the symlink \(path) is owned by uid \(info.st_uid), not root" }
                guard let target = readLink(path) else { return "the symlink \(path) cannot be read" }
                if target.hasPrefix("/") { current = "" }
                pending = parts(target) + pending
            case S_IFDIR:
                if let problem = directoryProblem(path, info) { return problem }
                current = path
            default:
                guard pending.allSatisfy({ $0 == "." }) else { return "\(path) is not a directory" }
                if let problem = fileProblem(path, info) { return problem }
                return interpreterProblem(of: path, depth: interpreters)
            }
        }
        return "\(current.isEmpty ? "/" : current) is a directory, not a program"
    }

    private static func directoryProblem(_ path: String, _ known: stat? = nil) -> String? {
        var info = known ?? stat()
        if known == nil {
            guard stat(path, &info) == 0 else { return "\(path) cannot be examined: \(String(cString: strerror(errno)))" }
        }
        guard info.st_uid == 0 else { return "the directory \(path) is owned by uid \(info.st_uid), not root" }
        guard info.st_mode & S_ISVTX == 0, let writers = writers(info.st_mode) else { return nil }
        return "the directory \(path) is writable by \(writers) and not sticky"
    }

    private static func fileProblem(_ path: String, _ info: stat) -> String? {
        guard info.st_mode & S_IFMT == S_IFREG else { return "\(path) is not a regular file" }
        guard info.st_uid == 0 else { return "\(path) is owned by uid \(info.st_uid), not root" }
        return writers(info.st_mode).map { "\(path) is writable by \($0)" }
    }

    private static func writers(_ mode: mode_t) -> String? {
        switch (mode & S_IWGRP != 0, mode & S_IWOTH != 0) {
        case (true, true): "its group and other users"
        case (true, false): "its group"
        case (false, true): "other users"
        case (false, false): nil
        }
    }

    /// A script names its interpreter in its first line (`#!/bin/sh -e`): the kernel runs that
    /// program, as root, with the script as an argument.
    private static func interpreterProblem(of path: String, depth: Int) -> String? {
        guard let interpreter = interpreter(of: path) else { return nil }
        guard depth < interpreterLimit else { return "\(path) nests more than \(interpreterLimit) interpreters" }
        // The kernel would resolve a relative one against the hook's working directory.
        guard interpreter.hasPrefix("/") else { return "the interpreter \(interpreter) of \(path) is not an absolute path" }
        if looksUpPath(interpreter) { return "\(path) is run by \(interpreter), which finds its program through PATH" }
        return problem(interpreter, interpreters: depth + 1).map { "\(path) is run by \(interpreter): \($0)" }
    }

    /// The program after `#!` in the first 256 bytes (what the kernel reads), or nil for a binary.
    static func interpreter(of path: String) -> String? {
        let fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var head = [UInt8](repeating: 0, count: 256)
        let count = read(fd, &head, head.count)
        guard count > 2, head[0] == UInt8(ascii: "#"), head[1] == UInt8(ascii: "!") else { return nil }
        let line = head[2..<count].prefix { $0 != UInt8(ascii: "\n") }
        let name = line.drop { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") }
            .prefix { $0 != UInt8(ascii: " ") && $0 != UInt8(ascii: "\t") && $0 != 0 }
        return name.isEmpty ? nil : String(decoding: name, as: UTF8.self)
    }

    /// By Unicode scalars: as a `Character`, a "/" followed by a combining mark is no separator,
    /// and the directory before it would go unchecked while the kernel still passes through it.
    private static func parts(_ path: String) -> [String] {
        path.unicodeScalars.split(separator: "/").map { String(String.UnicodeScalarView($0)) }
    }

    private static func readLink(_ path: String) -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let length = readlink(path, &buffer, buffer.count - 1)
        guard length > 0 else { return nil }
        return String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
