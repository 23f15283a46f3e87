import ArgumentParser
import PinKeeperDaemon

/// The entry point: synchronous on purpose. An async `main` drains the main queue with
/// `dispatch_main`, and the default executor is libdispatch's global queues; either starts
/// libdispatch's 1 s timer, which would wake the idle daemon every second for its whole life.
/// So the async commands run on the daemon's own threads while the main thread waits; parsing,
/// output and exit statuses are exactly those of `AsyncParsableCommand.main()`.
@main
enum Main {
    static func main() {
        HeapSettings.apply()  // before any other thread exists
        OpenSSLExit.skipCleanup()
        do {
            var command: any ParsableCommand
            do {
                command = try Pinkeeper.parseAsRoot(readerArguments())
            } catch {
                exitOnUsageError(error)
            }
            if let asyncCommand = command as? any AsyncParsableCommand {
                try setUpRuntime()
                nonisolated(unsafe) var running = asyncCommand  // handed to the pool, never touched here again
                try ThreadPoolExecutor.shared.runBlocking { try await running.run() }
            } else {
                try command.run()
            }
        } catch {
            Pinkeeper.exit(withError: error)
        }
    }

    /// `validate` is a reader's command line, which programs and the conformance runners match:
    /// every usage error is one line, `pinkeeper: usage: …`, and 64, as in every reader. The
    /// other commands keep ArgumentParser's own output; help and --version are not errors.
    private static func exitOnUsageError(_ error: any Error) -> Never {
        let arguments = CommandLine.arguments.dropFirst()
        guard arguments.first == Validate.configuration.commandName, Pinkeeper.exitCode(for: error) != .success else {
            Pinkeeper.exit(withError: error)
        }
        let message = Pinkeeper.message(for: error).split(whereSeparator: \.isNewline).first.map(String.init) ?? "invalid arguments"
        StandardError.write("pinkeeper: usage: \(message) (see pinkeeper validate --help)\n")
        Pinkeeper.exit(withError: ExitCode(64))
    }

    /// `validate --expected-common-name=` (an empty value after `=`) as every reader reads it:
    /// ArgumentParser takes `--option=` for an option without its value, so the two are split.
    private static func readerArguments() -> [String] {
        let arguments = Array(CommandLine.arguments.dropFirst())
        guard arguments.first == Validate.configuration.commandName else { return arguments }
        let end = arguments.firstIndex(of: "--") ?? arguments.endIndex
        return arguments[..<end].flatMap { argument -> [String] in
            guard argument.hasPrefix("--"), argument.hasSuffix("="),
                argument.firstIndex(of: "=") == argument.index(before: argument.endIndex)
            else { return [argument] }
            return [String(argument.dropLast()), ""]
        } + arguments[end...]
    }

    /// The timer thread every async command may sleep on; without it, one line and EX_OSERR (71).
    private static func setUpRuntime() throws {
        do {
            try ThreadSleep.prepare()
        } catch {
            StandardError.write("pinkeeper: \(error)\n")
            throw ExitCode(71)
        }
    }
}
