import Glibc

/// One inotify instance (inotify(7)): directories added with a mask, and their events read as
/// they come. The descriptor is close-on-exec (hooks must not inherit it) and non-blocking, so
/// `wait` sleeps in `poll` for at most the time it is given, or without a timeout when idle.
final class Inotify {
    struct Event: Equatable, Sendable {
        /// The watch it belongs to; -1 for IN_Q_OVERFLOW (events were lost).
        var watch: Int32
        var mask: UInt32
        /// The entry's name in the watched directory; empty for events on the directory itself.
        var name: String

        func has(_ flag: Int32) -> Bool { mask & UInt32(flag) != 0 }
    }

    private let fd: Int32

    init() throws(RuntimeSetupError) {
        fd = inotify_init1(Int32(IN_CLOEXEC | IN_NONBLOCK))
        guard fd >= 0 else {
            throw RuntimeSetupError(
                description: "cannot watch files (inotify_init1): \(String(cString: strerror(errno))); "
                    + "check fs.inotify.max_user_instances and the open-file limit")
        }
    }

    deinit { close(fd) }

    /// Why a directory cannot be watched: the errno of inotify_add_watch.
    struct WatchError: Error, CustomStringConvertible {
        var code: Int32
        var description: String { String(cString: strerror(code)) }
    }

    /// The watch descriptor for `directory` (the same one again for a directory already
    /// watched, its mask replaced).
    func watch(_ directory: String, mask: Int32) -> Result<Int32, WatchError> {
        let watch = inotify_add_watch(fd, directory, UInt32(bitPattern: mask | Int32(IN_ONLYDIR)))
        return watch >= 0 ? .success(watch) : .failure(WatchError(code: errno))
    }

    /// Stops a watch; its IN_IGNORED event still arrives.
    func remove(_ watch: Int32) { _ = inotify_rm_watch(fd, watch) }

    /// The events that arrive within `milliseconds` (-1: wait for the first without a timeout).
    func wait(milliseconds: Int32) -> [Event] {
        var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&poller, 1, milliseconds) > 0 else { return [] }  // timeout or EINTR
        var events: [Event] = []
        var buffer = [UInt8](repeating: 0, count: 16_384)  // above one event of the longest name (16 + 256)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            guard count > 0 else { return events }  // EAGAIN: all read
            events += Self.parse(buffer[..<count])
        }
    }

    /// `struct inotify_event` records as the kernel packs them: wd, mask, cookie, len, then `len`
    /// bytes of NUL-padded name. A record cut short (which the kernel never writes) ends the parse.
    static func parse(_ bytes: ArraySlice<UInt8>) -> [Event] {
        bytes.withUnsafeBytes { raw in
            var events: [Event] = [], offset = 0
            while offset + 16 <= raw.count {
                let watch = raw.loadUnaligned(fromByteOffset: offset, as: Int32.self)
                let mask = raw.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self)
                let length = Int(raw.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self))
                guard length <= raw.count - offset - 16 else { break }
                let name = raw[(offset + 16)..<(offset + 16 + length)].prefix { $0 != 0 }
                events.append(Event(watch: watch, mask: mask, name: String(decoding: name, as: UTF8.self)))
                offset += 16 + length
            }
            return events
        }
    }
}
