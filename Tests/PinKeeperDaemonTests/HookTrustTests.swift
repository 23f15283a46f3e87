import Foundation
import Glibc
import TestSupport
import Testing
@testable import PinKeeperDaemon
import Logging

/// A scratch directory, 0755 and root's, below /tmp (root's and sticky), removed at the end.
final class TrustScratch {
    let root: String
    static let nobody: uid_t = 65_534

    init() {
        root = TestEnvironment.temporaryDirectory("hooktrust").path
        chmod(root, 0o755)
    }

    deinit { try? FileManager.default.removeItem(atPath: root) }

    /// chmod after mkdir, so that the umask does not decide.
    @discardableResult
    func directory(_ name: String, mode: mode_t = 0o755, owner: uid_t = 0) throws -> String {
        let path = root + "/" + name
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        chmod(path, mode)
        chown(path, owner, 0)
        return path
    }

    @discardableResult
    func program(_ name: String, mode: mode_t = 0o755, owner: uid_t = 0, text: String = "#!/bin/sh\nexit 0\n") throws -> String {
        let path = root + "/" + name
        try text.write(toFile: path, atomically: false, encoding: .utf8)
        chmod(path, mode)
        chown(path, owner, 0)
        return path
    }

    @discardableResult
    func link(_ name: String, to target: String, owner: uid_t = 0) throws -> String {
        let path = root + "/" + name
        try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: target)
        lchown(path, owner, 0)
        return path
    }
}

/// Run as root, a hook runs only when nobody but root can change what would be executed
/// (`HookTrust`): the file, every directory above it, the symlinks followed and a script's
/// interpreter. The tests create files of other users, which needs root; the check itself
/// applies only to a process whose effective uid is 0.
@Suite(
    "Change hooks run as root: only programs nobody else can change",
    .enabled(if: geteuid() == 0, "needs root: the check applies to root only, and the tests give files to uid 65534"))
struct HookTrustTests {
    let scratch = TrustScratch()
    var root: String { scratch.root }

    @Test("a root-owned program in root-owned 0755 directories runs; so does one below sticky /tmp")
    func trusted() throws {
        try scratch.directory("bin")
        for mode: mode_t in [0o755, 0o700, 0o555] {
            let hook = try scratch.program("bin/hook-\(String(mode, radix: 8))", mode: mode)
            #expect(HookTrust.problem(hook) == nil, "\(HookTrust.problem(hook) ?? "")")
        }
        try #require(HookTrust.problem("/bin/sh") == nil, "the system's /bin/sh itself is refused")
    }

    @Test("a program owned by another user is refused")
    func foreignOwner() throws {
        let hook = try scratch.program("hook", owner: TrustScratch.nobody)
        #expect(HookTrust.problem(hook) == "\(hook) is owned by uid 65534, not root")
    }

    @Test(
        "a program its group or others may write is refused",
        arguments: [
            (0o775, "its group"), (0o757, "other users"), (0o777, "its group and other users"), (0o4775, "its group"),
        ] as [(mode_t, String)])
    func writableProgram(_ mode: mode_t, _ writers: String) throws {
        let hook = try scratch.program("hook", mode: mode)
        #expect(HookTrust.problem(hook) == "\(hook) is writable by \(writers)")
    }

    @Test(
        "a program in a directory its group or others may write, without the sticky bit, is refused",
        arguments: [
            (0o775, "its group"), (0o757, "other users"), (0o777, "its group and other users"),
        ] as [(mode_t, String)])
    func writableDirectory(_ mode: mode_t, _ writers: String) throws {
        let dir = try scratch.directory("shared", mode: mode)
        let hook = try scratch.program("shared/hook")
        #expect(HookTrust.problem(hook) == "the directory \(dir) is writable by \(writers) and not sticky")
    }

    @Test("two levels up counts as much as the program's own directory")
    func writableAncestor() throws {
        let dir = try scratch.directory("a", mode: 0o777)
        try scratch.directory("a/b/c")
        let hook = try scratch.program("a/b/c/hook")
        #expect(HookTrust.problem(hook) == "the directory \(dir) is writable by its group and other users and not sticky")
    }

    @Test("a root-owned program in a sticky world-writable directory, like /tmp, runs")
    func stickyDirectory() throws {
        try scratch.directory("tmp", mode: 0o1777)
        let hook = try scratch.program("tmp/hook")
        #expect(HookTrust.problem(hook) == nil)
        let foreign = try scratch.program("tmp/theirs", owner: TrustScratch.nobody)
        #expect(HookTrust.problem(foreign) == "\(foreign) is owned by uid 65534, not root")
    }

    @Test("a directory owned by another user is refused, even at 0755")
    func foreignDirectory() throws {
        let dir = try scratch.directory("theirs", owner: TrustScratch.nobody)
        let hook = try scratch.program("theirs/hook")
        #expect(HookTrust.problem(hook) == "the directory \(dir) is owned by uid 65534, not root")
    }

    // MARK: Symlinks: the target is what runs, and every directory and link on the way counts

    @Test("a root's symlink to a trusted program, relative or absolute, through .. too, runs")
    func trustedLinks() throws {
        try scratch.directory("bin")
        let hook = try scratch.program("bin/hook")
        try scratch.directory("links")
        #expect(HookTrust.problem(try scratch.link("links/absolute", to: hook)) == nil)
        #expect(HookTrust.problem(try scratch.link("links/relative", to: "../bin/hook")) == nil)
        try scratch.link("bin-link", to: "bin")
        #expect(HookTrust.problem(root + "/bin-link/hook") == nil)
        #expect(HookTrust.problem(root + "/links/../bin/./hook") == nil)
    }

    @Test("a symlink to a program in a writable directory is refused, naming that directory")
    func linkToUntrustedTarget() throws {
        let dir = try scratch.directory("open", mode: 0o777)
        try scratch.program("open/hook")
        let link = try scratch.link("hook", to: "open/hook")
        #expect(HookTrust.problem(link) == "the directory \(dir) is writable by its group and other users and not sticky")
    }

    @Test("a trusted symlink in a writable directory is refused: whoever writes it can replace the link")
    func linkInUntrustedDirectory() throws {
        let hook = try scratch.program("hook")
        let dir = try scratch.directory("open", mode: 0o777)
        let link = try scratch.link("open/hook", to: hook)
        #expect(HookTrust.problem(link) == "the directory \(dir) is writable by its group and other users and not sticky")
    }

    @Test("another user's symlink in a sticky directory is refused: its owner can replace it")
    func foreignLinkInStickyDirectory() throws {
        let hook = try scratch.program("hook")
        try scratch.directory("tmp", mode: 0o1777)
        let link = try scratch.link("tmp/hook", to: hook, owner: TrustScratch.nobody)
        #expect(HookTrust.problem(link) == "the symlink \(link) is owned by uid 65534, not root")
        #expect(HookTrust.problem(try scratch.link("tmp/roots", to: hook)) == nil)
    }

    @Test("a symlink loop, a missing file and a directory are refused with the reason")
    func otherFailures() throws {
        try scratch.link("loop", to: "loop")
        #expect(HookTrust.problem(root + "/loop") == "\(root)/loop leads through more than 40 symlinks")
        #expect(HookTrust.problem(root + "/missing") == "\(root)/missing cannot be examined: No such file or directory")
        #expect(HookTrust.problem(root) == "\(root) is a directory, not a program")
        let hook = try scratch.program("hook")
        #expect(HookTrust.problem(hook + "/x") == "\(hook) is not a directory")
    }

    // MARK: A script's interpreter runs as root too

    @Test("a script whose #! interpreter others can change is refused; /bin/sh with arguments runs")
    func interpreter() throws {
        try scratch.directory("open", mode: 0o777)
        let shell = try scratch.program("open/sh", text: "")
        let script = try scratch.program("hook", text: "#! \(shell) -e\nexit 0\n")
        #expect(HookTrust.interpreter(of: script) == shell)
        #expect(
            HookTrust.problem(script)
                == "\(script) is run by \(shell): the directory \(root)/open is writable by its group and other users and not sticky")
        let plain = try scratch.program("plain", text: "#!/bin/sh -e\nexit 0\n")
        #expect(HookTrust.problem(plain) == nil)
        let relative = try scratch.program("relative", text: "#!sh\nexit 0\n")
        #expect(HookTrust.problem(relative) == "the interpreter sh of \(relative) is not an absolute path")
    }

    @Test("the whole command line: a script handed to a trusted interpreter is checked too; env is refused")
    func commandLine() throws {
        try scratch.directory("open", mode: 0o777)
        let script = try scratch.program("open/hook.sh", mode: 0o644)
        #expect(
            HookTrust.problem(argv: ["/bin/sh", script])
                == "its argument \(script): the directory \(root)/open is writable by its group and other users and not sticky")
        let trusted = try scratch.program("hook.sh", mode: 0o644)
        #expect(HookTrust.problem(argv: ["/bin/sh", "-e", trusted, "--store", "/nonexistent/x"]) == nil)
        #expect(
            HookTrust.problem(argv: ["/usr/bin/env", "reload-service"])
                == "/usr/bin/env finds its program through PATH: name the program's absolute path")
        let viaEnv = try scratch.program("via-env", text: "#!/usr/bin/env python3\n")
        #expect(HookTrust.problem(argv: [viaEnv]) == "\(viaEnv) is run by /usr/bin/env, which finds its program through PATH")
        #expect(HookTrust.problem(argv: []) == "the hook names no program")
    }

    @Test("a slash followed by a combining mark still separates directories, which are all checked")
    func combiningMarkAfterSlash() throws {
        try scratch.directory("open", mode: 0o777)
        try scratch.directory("open/\u{301}bin")
        let hook = try scratch.program("open/\u{301}bin/hook")
        #expect(HookTrust.problem(hook) == "the directory \(root)/open is writable by its group and other users and not sticky")
    }

    // MARK: ChangeHooks

    static func changed(_ store: String, hook: String) -> StoreConfig {
        var policy = UpdatePolicy()
        policy.onChange = [hook]
        return StoreConfig(id: store, url: "https://example.invalid/", publicKeys: [], policy: policy)
    }

    @Test("ChangeHooks: a refused hook is not run, with one warning naming the store, the file and why; a trusted one runs")
    func changeHooks() async throws {
        let open = try scratch.directory("open", mode: 0o775)
        let refusedMarker = root + "/refused-ran", trustedMarker = root + "/trusted-ran"
        let refused = try scratch.program("open/hook", text: "#!/bin/sh\ntouch '\(refusedMarker)'\n")
        let trusted = try scratch.program("hook", text: "#!/bin/sh\ntouch '\(trustedMarker)'\n")
        let log = LogRecorder()
        let hooks = ChangeHooks(logger: log.logger, killGrace: .milliseconds(200), checksOwnership: true)
        hooks.pinsChanged(Self.changed("shared", hook: refused), cacheFile: "/dev/null", pins: 1)
        hooks.pinsChanged(Self.changed("own", hook: trusted), cacheFile: "/dev/null", pins: 1)
        await hooks.finish()

        #expect(!FileManager.default.fileExists(atPath: refusedMarker), "the refused hook ran")
        #expect(FileManager.default.fileExists(atPath: trustedMarker), "the trusted hook did not run")
        let lines = log.all.filter { $0.metadata["store"] == "shared" }
        try #require(lines.count == 1, "\(lines)")
        #expect(lines[0].level == .warning)
        #expect(lines[0].message.hasPrefix("change hook not run"))
        #expect(lines[0].metadata["hook"] == refused)
        #expect(lines[0].metadata["event"] == "hook-failed")
        #expect(lines[0].metadata["reason"] == "the directory \(open) is writable by its group and not sticky")
    }

    @Test("ChangeHooks not running as root (checksOwnership false) runs the same hook")
    func notRoot() async throws {
        try scratch.directory("open", mode: 0o775)
        let marker = root + "/ran"
        let hook = try scratch.program("open/hook", text: "#!/bin/sh\ntouch '\(marker)'\n")
        let hooks = ChangeHooks(logger: LogRecorder().logger, checksOwnership: false)
        hooks.pinsChanged(Self.changed("shared", hook: hook), cacheFile: "/dev/null", pins: 1)
        await hooks.finish()
        #expect(FileManager.default.fileExists(atPath: marker))
    }
}
