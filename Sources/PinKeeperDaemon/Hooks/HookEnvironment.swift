/// The environment a change hook gets: what it needs to know and nothing the daemon holds.
/// Not inherited: NOTIFY_SOCKET and WATCHDOG_* (a hook must not speak for the daemon), proxy
/// variables (they may carry credentials), systemd's credential and directory variables and
/// anything else the daemon was started with.
enum HookEnvironment {
    /// systemd's default search path, fixed so a hook behaves the same from `run` and `update`.
    static let path = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
    /// Locale and time zone only shape how a hook prints; they are passed on when set.
    static let inherited = ["LANG", "LC_ALL", "TZ"]

    static func make(store: String, cacheFile: String, pins: Int, from daemon: [String: String]) -> [String] {
        var variables = [
            "PATH=\(path)", "PINKEEPER_STORE=\(store)", "PINKEEPER_CACHE_FILE=\(cacheFile)",
            "PINKEEPER_PINS=\(pins)",
        ]
        for name in inherited {
            if let value = daemon[name], !value.contains("\0") { variables.append("\(name)=\(value)") }
        }
        return variables
    }
}
