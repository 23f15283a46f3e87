package import Foundation
import Glibc

/// Runs a program to completion with a time limit; on timeout it is SIGKILLed, never left hanging.
package enum ChildProcess {
    package struct Result {
        package var status: Int32
        package var stdout: String
        package var stderr: String
        package var timedOut: Bool
    }

    package static func run(
        _ path: String, _ arguments: [String], environment: [String: String]? = nil,
        timeout: TimeInterval
    ) -> Result {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        if let environment { process.environment = environment }
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        do { try process.run() } catch { return Result(status: -1, stdout: "", stderr: "\(error)", timedOut: false) }
        let stdout = Collector(out.fileHandleForReading), stderr = Collector(err.fileHandleForReading)
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline { usleep(20_000) }
        let timedOut = process.isRunning
        if timedOut { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        return Result(status: process.terminationStatus, stdout: stdout.text(), stderr: stderr.text(), timedOut: timedOut)
    }

    /// Drains a pipe on a thread of its own so a chatty child never blocks on a full pipe.
    package final class Collector: @unchecked Sendable {  // `data` is written by the reader thread and read after `done`
        private var data = Data()
        private let done = DispatchSemaphore(value: 0)

        package init(_ handle: FileHandle) {
            Thread.detachNewThread { [self] in
                data = handle.readDataToEndOfFile()
                done.signal()
            }
        }

        package func text() -> String {
            // Signalled once at the end of the stream: pass it on, or every later call waits 5 s.
            if done.wait(timeout: .now() + 5) == .success { done.signal() }
            return String(decoding: data, as: UTF8.self)
        }
    }
}
