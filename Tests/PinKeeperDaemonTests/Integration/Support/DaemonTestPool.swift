@testable import PinKeeperDaemon

/// The threads the in-process daemons and update passes of the tests run on, as `pinkeeper run`
/// runs on `ThreadPoolExecutor.shared`. Swift Testing calls synchronous tests on the cooperative
/// pool (one thread per core), and those that wait for child processes hold a thread for as long
/// as the child runs: work on that pool could then stall for minutes and time out, work here
/// cannot. The test's own awaits still need the cooperative pool; they only check what is done.
enum DaemonTestPool {
    static let shared = ThreadPoolExecutor(threads: 4, name: "pinkeeper-test-pool")
}
