/// The daemon's own threads could not get what they need from the kernel at start (a pipe, a
/// timerfd, an eventfd): nothing can run without them, so the command exits with EX_OSERR (71)
/// after one line saying which and why, and systemd restarts the service later.
public struct RuntimeSetupError: Error, CustomStringConvertible {
    public var description: String
}
