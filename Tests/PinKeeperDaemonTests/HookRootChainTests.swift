import Foundation
import Glibc
import TestSupport
import Testing
@testable import PinKeeperDaemon

/// When a configuration keeps pinkeeper working as root, a hook runs as root only when nobody
/// but root decides what runs: the configuration files, every path an argument names (absolute
/// or relative to `/`, where hooks start; existing or not), and no command string handed to a
/// shell or interpreter. Each case here is a way around the older check, which looked at the
/// program and at existing absolute arguments only.
@Suite(
    "Change hooks as root: the whole chain that decides what runs",
    .enabled(if: geteuid() == 0, "needs root: the check applies to root only, and the tests give files to uid 65534"))
struct HookRootChainTests {
    let scratch = TrustScratch()
    var root: String { scratch.root }

    /// A script in a directory uid 65534 owns: that user could change what it does.
    func theirScript() throws -> (directory: String, script: String) {
        let directory = try scratch.directory("app", owner: TrustScratch.nobody)
        return (directory, try scratch.program("app/hook.sh", mode: 0o644))
    }

    @Test(
        "a command string handed to a shell or an interpreter is refused, even when every file it names is root's",
        arguments: [
            ["/bin/sh", "-c", "SCRIPT --now"], ["/bin/bash", "-c", "exec SCRIPT"], ["/bin/sh", "-ec", ". SCRIPT"],
            ["/usr/bin/python3", "-c", "import os; os.system('SCRIPT')"], ["/usr/bin/perl", "-e", "system 'SCRIPT'"],
            ["/usr/bin/perl", "-we", "exec 'SCRIPT'"],
        ])
    func commandString(_ template: [String]) throws {
        guard FileManager.default.isExecutableFile(atPath: template[0]) else { return }  // perl or python missing here
        let (_, script) = try theirScript()
        let argv = template.map { $0.replacingOccurrences(of: "SCRIPT", with: script) }
        let problem = try #require(HookTrust.problem(argv: argv), "\(argv) would run as root")
        #expect(problem.contains("command string"), "\(problem)")
        #expect(problem.contains(template[1]), "\(problem)")
        // Even a command string naming only root's files: pinkeeper cannot tell what it runs.
        let trusted = try scratch.program("trusted.sh")
        #expect(HookTrust.problem(argv: [template[0], template[1], "\(trusted) --now"]) != nil)
    }

    @Test("an argument relative to the hook's working directory (/) is checked like an absolute one")
    func relativeArgument() throws {
        let (directory, script) = try theirScript()
        let relative = String(script.dropFirst())  // tmp/…/app/hook.sh, from /
        #expect(
            HookTrust.problem(argv: ["/bin/sh", relative])
                == "its argument \(relative) (\(script) from the hook's working directory /)"
                + ": the directory \(directory) is owned by uid 65534, not root"
        )
        let trusted = try scratch.program("trusted.sh", mode: 0o644)
        #expect(HookTrust.problem(argv: ["/bin/sh", String(trusted.dropFirst())]) == nil)
    }

    @Test("an absolute path that does not exist yet is judged by the directory where it would appear")
    func missingArgument() throws {
        let (directory, _) = try theirScript()
        let later = directory + "/later.sh"
        #expect(
            HookTrust.problem(argv: ["/bin/sh", later])
                == "its argument \(later): the directory \(directory) is owned by uid 65534, not root")
        // Several levels missing: the nearest existing directory decides.
        let deep = directory + "/not/yet/there.sh"
        #expect(
            HookTrust.problem(argv: ["/bin/sh", deep]) == "its argument \(deep): the directory \(directory) is owned by uid 65534, not root"
        )
        // Below a directory root owns that its group may write: the group may create the file.
        let shared = try scratch.directory("shared", mode: 0o775)
        #expect(
            HookTrust.problem(argv: ["/usr/bin/true", shared + "/later"])
                == "its argument \(shared)/later: the directory \(shared) is writable by its group and not sticky")
    }

    @Test("a missing path below a sticky world-writable directory (like /tmp) is refused: anyone may create it")
    func missingBelowStickyDirectory() throws {
        let sticky = try scratch.directory("tmp", mode: 0o1777)
        let later = sticky + "/hook.sh"
        #expect(
            HookTrust.problem(argv: ["/bin/sh", later])
                == "its argument \(later): it does not exist"
                + ", and the directory \(sticky) where it would appear is writable by its group and other users"
        )
        // Missing below a directory only root can write: nobody else can create it.
        #expect(HookTrust.problem(argv: ["/usr/bin/true", root + "/not-there"]) == nil)
        #expect(HookTrust.problem(argv: ["/usr/bin/true", "--quiet", "api.example.com"]) == nil)
    }

    @Test("a path inside an option (--config=/path, -I/path) is checked too")
    func embeddedPath() throws {
        let (directory, script) = try theirScript()
        for argument in ["--config=\(script)", "-I\(directory)"] {
            let problem = HookTrust.problem(argv: ["/usr/bin/true", argument])
            #expect(problem?.contains("is owned by uid 65534, not root") == true, "\(argument): \(problem ?? "nil")")
        }
    }

    @Test(
        "a configuration file that someone besides root can change is refused, naming it",
        arguments: ["group-writable", "foreign-owner", "open-directory", "drop-in"])
    func configurationFile(_ kind: String) throws {
        let hook = try scratch.program("hook")
        try scratch.directory("etc")
        let main = root + "/etc/pinkeeper.toml"
        try "".write(toFile: main, atomically: false, encoding: .utf8)
        chmod(main, 0o644)
        var files = [main]
        var expected: String
        switch kind {
        case "group-writable":
            chmod(main, 0o664)
            expected = "the configuration file \(main): \(main) is writable by its group"
        case "foreign-owner":
            chown(main, TrustScratch.nobody, 0)
            expected = "the configuration file \(main): \(main) is owned by uid 65534, not root"
        case "open-directory":
            chmod(root + "/etc", 0o777)
            expected = "the configuration file \(main): the directory \(root)/etc is writable by its group and other users and not sticky"
        default:
            let dropIns = try scratch.directory("etc/stores.d", owner: TrustScratch.nobody)
            let dropIn = dropIns + "/banking.toml"
            try "".write(toFile: dropIn, atomically: false, encoding: .utf8)
            files.append(dropIn)
            expected = "the configuration file \(dropIn): the directory \(dropIns) is owned by uid 65534, not root"
        }
        #expect(HookTrust.problem(argv: [hook], configurationFiles: files) == expected)
    }

    @Test("root's own configuration files and hook pass the whole check")
    func trustedChain() throws {
        let hook = try scratch.program("hook")
        try scratch.directory("etc/stores.d")
        let main = root + "/etc/pinkeeper.toml", dropIn = root + "/etc/stores.d/a.toml"
        for file in [main, dropIn] {
            try "".write(toFile: file, atomically: false, encoding: .utf8)
            chmod(file, 0o600)
        }
        #expect(HookTrust.problem(argv: [hook, "--store", "a", "/dev/null"], configurationFiles: [main, dropIn]) == nil)
    }

    @Test(
        "a program that runs another program or a command string its arguments name is refused",
        arguments: ["/usr/bin/nice", "/usr/bin/timeout", "/usr/bin/xargs", "/usr/bin/flock", "/usr/bin/setsid", "/usr/bin/awk"])
    func launchers(_ program: String) throws {
        guard FileManager.default.isExecutableFile(atPath: program) else { return }
        let problem = try #require(HookTrust.problem(argv: [program, "sh", "-c", "true"]), "\(program) was accepted")
        #expect(problem.hasPrefix(program), "\(problem)")
    }

    @Test("ChangeHooks: sh -c with a script another user owns does not run as root, with one warning naming it")
    func changeHooksRefuseCommandString() async throws {
        let (_, script) = try theirScript()
        let marker = root + "/ran"
        try "#!/bin/sh\ntouch '\(marker)'\n".write(toFile: script, atomically: false, encoding: .utf8)
        chmod(script, 0o755)
        let log = LogRecorder()
        let hooks = ChangeHooks(logger: log.logger, killGrace: .milliseconds(200), checksOwnership: true)
        var store = HookTrustTests.changed("shared", hook: "/bin/sh")
        store.policy.onChange = ["/bin/sh", "-c", "\(script) --now"]
        hooks.pinsChanged(store, cacheFile: "/dev/null", pins: 1)
        await hooks.finish()
        #expect(!FileManager.default.fileExists(atPath: marker), "the hook ran as root")
        let lines = log.all.filter { $0.metadata["store"] == "shared" }
        try #require(lines.count == 1, "\(lines)")
        #expect(lines[0].message.hasPrefix("change hook not run"))
        #expect(lines[0].metadata["reason"]?.contains("command string") == true, "\(lines[0].metadata)")
    }
}
