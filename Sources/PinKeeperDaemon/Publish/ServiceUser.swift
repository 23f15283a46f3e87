import Glibc

/// Started as root (`sudo pinkeeper update`, `import` or `run`), pinkeeper works as its service
/// user, as freshclam does as its DatabaseOwner: the files in the cache and state directories
/// keep one owner, and no hook runs as root because an operator typed `sudo`. The service user
/// is the configured `user`, else the owner of the cache directory (the package's `pinkeeper`).
/// Only `user = "root"` keeps root, for hooks under `HookCommandLine`'s rules.
public enum ServiceUser {
    public struct Problem: Error, CustomStringConvertible, Equatable {
        public var description: String
        init(_ description: String) { self.description = description }
    }

    /// Switches to the service user when started as root: hands the data directories over to it
    /// first (`DirectoryHandover`; not for a dry run, which writes nothing), then sets groups,
    /// group and user (`UserSwitch`). Returns whom it works as now, or nil when it did not switch
    /// (not root, or the configuration asks for root).
    @discardableResult
    public static func workAsServiceUser(_ configuration: Configuration, configPath: String, handingOver: Bool) throws(Problem)
        -> ConfiguredUser?
    {
        guard let user = try decide(configuration, configPath: configPath) else { return nil }
        if handingOver { try DirectoryHandover.run(configuration, to: user) }
        try UserSwitch.become(user)
        return user
    }

    /// Whom to work as, or nil to stay as we are. Fail-safe: with no `user`, a cache directory
    /// that is root's or missing names no service user, and guessing one would either keep
    /// root (hooks as root) or give root's files to a user nobody chose.
    static func decide(_ configuration: Configuration, configPath: String) throws(Problem) -> ConfiguredUser? {
        guard geteuid() == 0 else { return nil }
        if let user = configuration.user { return user.isRoot ? nil : user }
        let cache = configuration.cacheDirectory
        let fix = "set user = \"pinkeeper\" (the service user) in \(configPath), or user = \"root\" to keep working as root"
        var info = stat()
        guard stat(cache, &info) == 0 else {
            throw Problem("started as root, pinkeeper works as the owner of the cache directory \(cache), which does not exist: \(fix)")
        }
        guard info.st_uid != 0 else {
            throw Problem(
                "started as root, pinkeeper works as the owner of the cache directory \(cache), but it is root's: "
                    + "chown it to the service user (chown pinkeeper: \(cache)), or \(fix)")
        }
        return ConfiguredUser.lookUp(uid: info.st_uid)
    }
}
