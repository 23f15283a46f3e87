import Glibc

/// Programs that turn an argument into code, which root cannot check: a shell's `-c`, Python's
/// `-c`, Perl's `-e`, awk's program text, and the programs that run another program or command
/// named in their arguments (`env`, `nice`, `xargs`, `su -c`…). Named by the configured program
/// and by the file it resolves to (`/usr/bin/python3` is `python3.11`), without a version suffix.
enum HookInterpreters {
    /// Each interpreter's short options that take code (or a module to load, which is code too).
    static let codeOptions: [String: Set<Character>] = {
        var table: [String: Set<Character>] = [:]
        for shell in ["sh", "bash", "rbash", "dash", "ash", "zsh", "ksh", "mksh", "pdksh", "lksh", "oksh", "yash", "posh", "csh", "tcsh"] {
            table[shell] = ["c"]
        }
        for (names, letters) in [
            (["fish"], "cC"), (["python", "pypy", "ipython", "jython"], "c"), (["perl"], "eEMm"), (["ruby", "jruby", "irb"], "er"),
            (["node", "nodejs"], "epr"), (["php"], "rBREFda"), (["lua", "luajit"], "el"), (["expect", "guile", "gjs", "elvish"], "ce"),
            (["Rscript", "R"], "e"), (["julia"], "eEL"), (["pwsh", "powershell"], "cCeE"), (["osascript"], "e"), (["gdb"], "ex"),
            (["vi", "vim", "nvim", "ex", "view"], "cS"),
        ] as [([String], String)] {
            for name in names { table[name] = Set(letters) }
        }
        return table
    }()

    /// Programs whose first argument is a program text, or that run a program or a command their
    /// arguments name (through PATH, a shell or a remote host).
    static let runners: Set<String> = [
        "awk", "gawk", "mawk", "nawk", "sed", "busybox", "toybox", "env", "nice", "nohup", "timeout", "stdbuf", "setsid", "chroot",
        "ionice", "taskset", "chrt", "prlimit", "time", "xargs", "find", "flock", "su", "sudo", "doas", "pkexec", "runuser", "sg",
        "newgrp", "setpriv", "unshare", "nsenter", "systemd-run", "ssh", "script", "watch", "start-stop-daemon", "parallel",
        "run-parts", "capsh", "strace", "ltrace", "valgrind", "catchsegv", "daemonize", "dbus-run-session", "xvfb-run", "fakeroot",
        "numactl", "setarch", "linux32", "linux64", "unbuffer", "faketime", "torsocks", "proxychains", "sshpass", "make", "deno",
        "bun", "tclsh", "wish", "jshell", "sbcl", "racket", "emacs", "m4", "cgexec", "firejail", "bwrap", "systemd-nspawn",
    ]

    /// Why root must not run `program` with `arguments`, or nil when none of them is code.
    static func problem(program: String, arguments: [String]) -> String? {
        let names = [HookCommandLine.baseName(program)] + (realPath(program).map { [HookCommandLine.baseName($0)] } ?? [])
        for name in names.map(withoutVersion) where runners.contains(name) {
            return "\(program) runs a program or command string that its arguments name, which pinkeeper cannot check as root: "
                + "name that program itself, or a script nobody but root can change"
        }
        guard let letters = names.map(withoutVersion).lazy.compactMap({ codeOptions[$0] }).first else { return nil }
        for argument in optionsBeforeScript(arguments) {
            let isLong = argument.hasPrefix("--")
            guard isLong || argument.dropFirst().contains(where: { letters.contains($0) }) else { continue }
            let what = isLong ? "a long option, which may carry code or load it" : "a command string (or code to load)"
            return "its argument \(argument) makes \(program) run \(what), whose files pinkeeper cannot check as root: "
                + "put the command in a script nobody but root can change and name that script"
        }
        return nil
    }

    /// The interpreter's own options: those before the first argument naming an existing regular
    /// file (the script, whose own arguments follow) or after `--`. A value of an option (`-W
    /// ignore`) is passed over like any non-file argument, so an option after it is still seen.
    private static func optionsBeforeScript(_ arguments: [String]) -> [String] {
        var options: [String] = []
        for argument in arguments {
            if argument == "--" { break }
            if argument.hasPrefix("-") && argument != "-" {
                options.append(argument)
                continue
            }
            if isRegularFile(argument.hasPrefix("/") ? argument : HookCommandLine.workingDirectory + argument) { break }
        }
        return options
    }

    /// `python3.11` → `python`, `perl5.36.0` → `perl`, `lua5.4` → `lua`.
    static func withoutVersion(_ name: String) -> String {
        var scalars = Array(name.unicodeScalars)
        while let last = scalars.last, scalars.count > 1, "0123456789.-_".unicodeScalars.contains(last) { scalars.removeLast() }
        var view = String.UnicodeScalarView()
        view.append(contentsOf: scalars)
        return String(view)
    }

    private static func isRegularFile(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFREG
    }
}
