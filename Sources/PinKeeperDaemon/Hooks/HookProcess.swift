import Glibc

/// Runs one change hook to its end on the calling thread (a thread of its own, never the
/// cooperative pool): `posix_spawn` without a shell, in a process group of its own, stdin from
/// /dev/null, stdout and stderr captured (bounded), every other descriptor closed, signal
/// dispositions and mask reset. At the timeout the whole group gets SIGTERM, and SIGKILL after
/// `grace`; the wait for it is bounded too, so a run always ends within `timeout + 2 × grace`.
/// When `stop` ends it, `stopGrace` (if shorter) takes the place of `grace`: a stopping daemon
/// must exit within 2 s of its SIGTERM, and its supervisor kills what is left soon after anyway.
enum HookProcess {
    struct Outcome: Sendable, Equatable {
        enum End: Sendable, Equatable {
            case exited(Int32)
            case signalled(Int32)
            /// posix_spawn failed (the errno): the program is missing, not executable, …
            case notStarted(Int32)
            /// Still there after SIGKILL and another grace period (stuck in the kernel): left behind.
            case unreaped
            /// Ended, but its exit status was collected by someone else (a stray waitpid(-1)).
            case lost
        }
        var end: End
        var timedOut: Bool
        /// Terminated early because `stop` said so (the daemon is stopping).
        var stopped = false
        var duration: Duration
        var stdout: CapturedOutput
        var stderr: CapturedOutput

        var succeeded: Bool { end == .exited(0) && !timedOut && !stopped }
    }

    /// `stop` is asked as the hook runs; once it says yes the hook is ended as at its timeout.
    static func run(
        argv: [String], environment: [String], timeout: Duration, grace: Duration,
        outputLimit: Int, stopGrace: Duration = .seconds(1), stop: () -> Bool = { false }
    ) -> Outcome {
        let started = ContinuousClock.now
        var stdout = CapturedOutput(limit: outputLimit), stderr = CapturedOutput(limit: outputLimit)
        var outPipe: [Int32] = [-1, -1], errPipe: [Int32] = [-1, -1]
        // Close-on-exec right away (pipe2 is not imported); the hook itself closes everything above 2 anyway.
        guard makePipe(&outPipe) else {
            return Outcome(end: .notStarted(errno), timedOut: false, duration: .zero, stdout: stdout, stderr: stderr)
        }
        guard makePipe(&errPipe) else {
            let error = errno
            close(outPipe[0]); close(outPipe[1])
            return Outcome(end: .notStarted(error), timedOut: false, duration: .zero, stdout: stdout, stderr: stderr)
        }
        let spawned = spawn(argv: argv, environment: environment, stdout: outPipe[1], stderr: errPipe[1])
        close(outPipe[1]); close(errPipe[1])
        let pid: pid_t
        switch spawned {
        case .success(let child): pid = child
        case .failure(let error):
            close(outPipe[0]); close(errPipe[0])
            return Outcome(
                end: .notStarted(error.code), timedOut: false, duration: ContinuousClock.now - started,
                stdout: stdout, stderr: stderr)
        }
        let readers = [outPipe[0], errPipe[0]]
        for fd in readers { _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) }
        defer { readers.forEach { close($0) } }

        var open = readers
        var timedOut = false, stopped = false, wait = grace
        var terminatedAt: ContinuousClock.Instant?, killedAt: ContinuousClock.Instant?
        let deadline = started + timeout
        while true {
            drain(&open, stdout: &stdout, stderr: &stderr, readers: readers, waitMilliseconds: open.isEmpty ? 0 : 20)
            if open.isEmpty { usleep(10_000) }
            if hasExited(pid) {
                // Leftovers of a hook that ran out of time go too; a hook that finished may leave
                // a background process running (its own business).
                if terminatedAt != nil { kill(-pid, SIGKILL) }
                drain(&open, stdout: &stdout, stderr: &stderr, readers: readers, waitMilliseconds: 0)
                var status: Int32 = 0, reaped: pid_t
                repeat { reaped = waitpid(pid, &status, 0) } while reaped == -1 && errno == EINTR
                let end: Outcome.End =
                    reaped != pid
                    ? .lost
                    : status & 0x7F == 0 ? .exited((status >> 8) & 0xFF) : .signalled(status & 0x7F)
                return Outcome(
                    end: end, timedOut: timedOut, stopped: stopped, duration: ContinuousClock.now - started,
                    stdout: stdout, stderr: stderr)
            }
            let now = ContinuousClock.now
            if terminatedAt == nil && (now >= deadline || stop()) {
                timedOut = now >= deadline
                stopped = !timedOut
                if stopped { wait = min(grace, stopGrace) }
                terminatedAt = now
                kill(-pid, SIGTERM)
            } else if let terminatedAt, killedAt == nil, now >= terminatedAt + wait {
                killedAt = now
                kill(-pid, SIGKILL)
            } else if let killedAt, now >= killedAt + wait {
                return Outcome(
                    end: .unreaped, timedOut: timedOut, stopped: stopped, duration: now - started,
                    stdout: stdout, stderr: stderr)
            }
        }
    }

    /// Whether `pid` has ended, without reaping it: until it is reaped its process group id
    /// cannot be reused, so `kill(-pid, …)` never reaches a stranger.
    private static func hasExited(_ pid: pid_t) -> Bool {
        var info = siginfo_t()
        let result = waitid(P_PID, id_t(pid), &info, WEXITED | WNOHANG | WNOWAIT)
        // Linux zeroes si_signo when WNOHANG finds nothing; SIGCHLD means the child has ended.
        // ECHILD: someone else reaped it.
        return (result == 0 && info.si_signo == SIGCHLD) || (result == -1 && errno == ECHILD)
    }

    /// Reads whatever the pipes hold, waiting at most `waitMilliseconds` for the first byte.
    private static func drain(
        _ open: inout [Int32], stdout: inout CapturedOutput, stderr: inout CapturedOutput,
        readers: [Int32], waitMilliseconds: Int32
    ) {
        guard !open.isEmpty else { return }
        var fds = open.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
        guard poll(&fds, nfds_t(fds.count), waitMilliseconds) > 0 else { return }
        var buffer = [UInt8](repeating: 0, count: 16_384)
        for entry in fds where entry.revents != 0 {
            while true {
                let count = read(entry.fd, &buffer, buffer.count)
                if count > 0 {
                    if entry.fd == readers[0] { stdout.append(buffer[0..<count]) } else { stderr.append(buffer[0..<count]) }
                    continue
                }
                if count == -1 && errno == EINTR { continue }
                if count == 0 || errno != EAGAIN { open.removeAll { $0 == entry.fd } }  // end of file, or broken
                break
            }
        }
    }

    private static func makePipe(_ ends: inout [Int32]) -> Bool {
        guard pipe(&ends) == 0 else { return false }
        for fd in ends { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        return true
    }

    struct SpawnError: Error { var code: Int32 }

    private static func spawn(argv: [String], environment: [String], stdout: Int32, stderr: Int32)
        -> Result<pid_t, SpawnError>
    {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, stdout, 1)
        posix_spawn_file_actions_adddup2(&actions, stderr, 2)
        SpawnExtras.closeInheritedDescriptors(&actions)
        SpawnExtras.changeDirectory(&actions, to: "/")

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // Ignored dispositions (the daemon may have inherited some) survive exec: without
        // SETSIGDEF the hook could not be terminated.
        var all = sigset_t(), none = sigset_t()
        sigfillset(&all)
        sigemptyset(&none)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))

        let cArgv = argv.map { strdup($0) } + [nil]
        let cEnv = environment.map { strdup($0) } + [nil]
        defer { (cArgv + cEnv).forEach { free($0) } }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, argv[0], &actions, &attributes, cArgv, cEnv)
        return result == 0 ? .success(pid) : .failure(SpawnError(code: result))
    }
}
