import Glibc

/// Run as root (a configuration that asks for `user = "root"`), a change hook is a way to root
/// for anyone who can change what it runs. So, as OpenSSH's StrictModes does for key files, root
/// runs a hook only when nobody else can change any file that decides what runs (the command
/// line's rules: `HookCommandLine`). Each path is resolved as the kernel resolves it, and
/// - every directory passed through, `/` included and those reached through symlinks, is owned
///   by root and not writable by its group or others, unless it is sticky (`/tmp`): there only
///   an entry's owner can replace it, and the entry's owner is checked next;
/// - every symlink followed is owned by root (in a sticky directory its owner could replace it);
/// - the file is owned by root and not writable by its group or others;
/// - a program's `#!` interpreter passes the same check (it runs as root too), to the kernel's
///   depth of nested interpreters;
/// - a path that does not exist yet is judged by the directory where it would appear: owned by
///   root and writable by nobody else, sticky or not (in `/tmp` anyone may create it).
/// Since everything on the way is root's, the check cannot be raced: nobody else can swap a
/// part between the check and the spawn.
enum HookTrust {
    static var runningAsRoot: Bool { geteuid() == 0 }

    /// The kernel's limits: symlinks followed in one lookup, and nested `#!` interpreters.
    static let symlinkLimit = 40
    static let interpreterLimit = 4

    /// What a path is to the hook, which decides what it must be.
    enum Role {
        /// Executed: a regular file, and a script's interpreter too.
        case program
        /// A configuration file that names the hook: a regular file.
        case configuration
        /// Named by an argument: the program may read, run or create it. A regular file, a
        /// directory nobody else can add to, or one of the kernel's memory devices (`/dev/null`).
        case argument
    }

    /// Why root must not run the hook `argv` named in `configurationFiles`, or nil when nobody
    /// but root decides what it runs (`HookCommandLine`).
    static func problem(argv: [String], configurationFiles: [String] = []) -> String? {
        HookCommandLine.problem(argv: argv, configurationFiles: configurationFiles)
    }

    /// Why root must not run the program `program`, or nil when only root can change it.
    static func problem(_ program: String, interpreters: Int = 0) -> String? {
        problem(program, role: .program, interpreters: interpreters)
    }

    static func problem(_ path: String, role: Role, interpreters: Int = 0) -> String? {
        guard path.hasPrefix("/") else { return "\(path) is not an absolute path" }
        if let problem = directoryProblem("/") { return problem }
        var pending = parts(path)
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
            let next = current + "/" + name
            var info = stat()
            guard lstat(next, &info) == 0 else {
                let code = errno
                guard role == .argument, code == ENOENT else { return "\(next) cannot be examined: \(String(cString: strerror(code)))" }
                return missingProblem(in: current.isEmpty ? "/" : current)
            }
            switch info.st_mode & S_IFMT {
            case S_IFLNK:
                links += 1
                guard links <= symlinkLimit else { return "\(path) leads through more than \(symlinkLimit) symlinks" }
                guard info.st_uid == 0 else { return "the symlink \(next) is owned by uid \(info.st_uid), not root" }
                guard let target = readLink(next) else { return "the symlink \(next) cannot be read" }
                if target.hasPrefix("/") { current = "" }
                pending = parts(target) + pending
            case S_IFDIR:
                if let problem = directoryProblem(next, info) { return problem }
                current = next
            default:
                guard pending.allSatisfy({ $0 == "." }) else { return "\(next) is not a directory" }
                return endProblem(next, info, role: role, interpreters: interpreters)
            }
        }
        let directory = current.isEmpty ? "/" : current
        guard role == .argument else { return "\(directory) is a directory, not a \(role == .program ? "program" : "file")" }
        // A program may run or read what anyone adds to a directory it is given, sticky or not.
        return onlyRootWrites(directory).map { "the directory \(directory) is writable by \($0)" }
    }

    /// The file the path ends at, by what the hook does with it.
    private static func endProblem(_ path: String, _ info: stat, role: Role, interpreters: Int) -> String? {
        if role == .argument && info.st_mode & S_IFMT == S_IFCHR {
            // /dev/null, /dev/zero, /dev/urandom…: what they read is the kernel's; a terminal is not.
            guard info.st_uid == 0, major(info.st_rdev) == 1 else { return "\(path) is a device other than /dev/null and its kind" }
            return nil
        }
        if let problem = fileProblem(path, info) { return problem }
        return role == .program ? interpreterProblem(of: path, depth: interpreters) : nil
    }

    /// Nothing exists at the path yet: whoever may create entries where it would appear decides
    /// what it will be (the directories above were checked on the way).
    private static func missingProblem(in directory: String) -> String? {
        var info = stat()
        guard stat(directory, &info) == 0 else { return "\(directory) cannot be examined: \(String(cString: strerror(errno)))" }
        let writers = onlyRootWrites(directory)
        return writers.map { "it does not exist, and the directory \(directory) where it would appear is writable by \($0)" }
    }

    /// Who besides root may write `directory` (sticky or not), or nil when nobody.
    private static func onlyRootWrites(_ directory: String) -> String? {
        var info = stat()
        guard stat(directory, &info) == 0 else { return "whoever can replace it (it cannot be examined)" }
        return writers(info.st_mode)
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
        if HookCommandLine.looksUpPath(interpreter) { return "\(path) is run by \(interpreter), which finds its program through PATH" }
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

    /// The device's major number (glibc's `major()` is a macro Swift does not import).
    private static func major(_ device: dev_t) -> UInt64 {
        let value = UInt64(device)
        return ((value >> 8) & 0xFFF) | ((value >> 32) & ~UInt64(0xFFF))
    }
}
