import Glibc

/// What the timer thread blocks on: a timerfd on CLOCK_BOOTTIME, armed for one absolute deadline
/// or disarmed, and an eventfd that other threads write to when the deadline must change. `wait`
/// polls both without a timeout, so with the timer disarmed the thread sleeps until woken.
/// timerfd and eventfd are not in Swift's Glibc module; they are looked up in libc at run time.
final class BootTimer: @unchecked Sendable {  // immutable descriptors; the kernel serialises their use
    private typealias TimerCreate = @convention(c) (Int32, Int32) -> Int32
    private typealias TimerSetTime =
        @convention(c) (
            Int32, Int32, UnsafePointer<itimerspec>?,
            UnsafeMutablePointer<itimerspec>?
        ) -> Int32
    private typealias EventCreate = @convention(c) (UInt32, Int32) -> Int32

    // From <sys/timerfd.h> and <sys/eventfd.h>: the CLOEXEC and NONBLOCK flags are O_CLOEXEC and O_NONBLOCK.
    private static let timerAbsolute: Int32 = 1  // TFD_TIMER_ABSTIME
    private static let flags = Int32(O_CLOEXEC | O_NONBLOCK)

    let timerFD: Int32  // not private: tests read the kernel's view of it in /proc/self/fdinfo
    private let eventFD: Int32
    private let setTime: TimerSetTime

    init() throws(RuntimeSetupError) {
        guard let create: TimerCreate = Self.symbol("timerfd_create"),
            let setTime: TimerSetTime = Self.symbol("timerfd_settime"),
            let eventCreate: EventCreate = Self.symbol("eventfd")
        else {
            throw RuntimeSetupError(
                description: "libc has no timerfd_create/timerfd_settime/eventfd (glibc 2.8 and Linux 2.6.27 have them)")
        }
        timerFD = create(CLOCK_BOOTTIME, Self.flags)
        eventFD = eventCreate(0, Self.flags)
        guard timerFD >= 0, eventFD >= 0 else {
            let reason = String(cString: strerror(errno))
            if timerFD >= 0 { close(timerFD) }
            if eventFD >= 0 { close(eventFD) }
            throw RuntimeSetupError(
                description: "cannot create the sleep timer (timerfd, eventfd): \(reason); check the open-file limit (LimitNOFILE=)")
        }
        self.setTime = setTime
    }

    private static func symbol<T>(_ name: String) -> T? {
        // RTLD_DEFAULT is the null handle on glibc.
        guard let address = dlsym(UnsafeMutableRawPointer(bitPattern: 0), name) else { return nil }
        return unsafeBitCast(address, to: T.self)
    }

    /// Fires at `deadline` (`BootTime.now` nanoseconds; at once if it has passed), or never when nil.
    func arm(at deadline: Int64?) {
        var setting = itimerspec()  // all zero: disarmed
        if let deadline {
            let clamped = max(deadline, 1)  // an it_value of zero would disarm instead
            setting.it_value = timespec(tv_sec: Int(clamped / 1_000_000_000), tv_nsec: Int(clamped % 1_000_000_000))
        }
        _ = setTime(timerFD, Self.timerAbsolute, &setting, nil)
    }

    /// Makes the current or next `wait` return (from any thread).
    func wake() {
        var one: UInt64 = 1
        _ = write(eventFD, &one, 8)  // only fails when the counter is near 2^64: it is readable then anyway
    }

    /// Blocks until the timer fires or `wake` was called, and consumes both.
    func wait() {
        var descriptors = [
            pollfd(fd: timerFD, events: Int16(POLLIN), revents: 0),
            pollfd(fd: eventFD, events: Int16(POLLIN), revents: 0),
        ]
        while poll(&descriptors, 2, -1) < 0 && errno == EINTR {}
        var count: UInt64 = 0
        for descriptor in descriptors where descriptor.revents != 0 { _ = read(descriptor.fd, &count, 8) }
    }
}
