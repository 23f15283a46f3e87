import Foundation
import Glibc
import TestSupport

/// `pinkeeper run` as a child process, with its stderr captured. Always SIGKILLed at the end
/// if it is still running, so a hung daemon never hangs the test run.
final class DaemonProcess: @unchecked Sendable {  // used by one test at a time
    private let process = Process()
    private let stderrCollector: ChildProcess.Collector

    /// `launcher`: a program and its arguments that end by exec'ing the rest of the command line
    /// (`setpriv …`), so that `pid` and the exit status are the daemon's own.
    /// `arguments`: more options of `run`.
    init(config: String, environment: [String: String] = [:], launcher: [String] = [], arguments: [String] = []) throws {
        // A launcher may drop to another user, who cannot reach a binary inside a 0700 clone.
        let binary = launcher.isEmpty ? TestEnvironment.binary : TestEnvironment.binaryForOtherUsers
        let command = launcher + [binary, "run", "--config", config] + arguments
        process.executableURL = URL(fileURLWithPath: command[0])
        process.arguments = Array(command.dropFirst())
        var env = ProcessInfo.processInfo.environment
        env.removeValue(forKey: "NOTIFY_SOCKET")
        env.removeValue(forKey: "WATCHDOG_USEC")
        env.removeValue(forKey: "JOURNAL_STREAM")
        process.environment = env.merging(environment) { $1 }
        let err = Pipe()
        process.standardError = err
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        stderrCollector = ChildProcess.Collector(err.fileHandleForReading)
    }

    deinit {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    var pid: pid_t { process.processIdentifier }
    var isRunning: Bool { process.isRunning }

    func signal(_ number: Int32) { kill(process.processIdentifier, number) }

    /// Waits for exit; nil (and SIGKILL) if it did not exit in time.
    func waitForExit(timeout: TimeInterval) -> Int32? {
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline { usleep(10_000) }
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            return nil
        }
        return process.terminationStatus
    }

    /// Everything written to stderr (complete once the process has exited).
    var stderr: String { stderrCollector.text() }
}
