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
        OpenSSLAtExit.skipCleanup()  // before anything else uses OpenSSL
        do {
            var command = try Pinkeeper.parseAsRoot()
            if let asyncCommand = command as? AsyncParsableCommand {
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
