public import Glibc

/// `user`: whom pinkeeper works as when it is started as root (`sudo pinkeeper update`).
public struct ConfiguredUser: Sendable, Equatable {
    public var uid: uid_t
    /// The user database's group for the user, or the uid's own number without an entry (as
    /// containers give a numeric user the same group).
    public var gid: gid_t
    /// The user database's name; its groups become the supplementary groups.
    public var name: String?

    public init(uid: uid_t, gid: gid_t, name: String?) {
        self.uid = uid
        self.gid = gid
        self.name = name
    }

    /// `user = "root"` (or 0): the configuration asks explicitly to keep working as root.
    public var isRoot: Bool { uid == 0 }

    /// `uid 998 (pinkeeper)`, or `uid 4242` without an entry.
    public var described: String { name.map { "uid \(uid) (\($0))" } ?? "uid \(uid)" }

    /// The user database's entry for `uid`, if any.
    public static func lookUp(uid: uid_t) -> ConfiguredUser {
        var entry = passwd(), result: UnsafeMutablePointer<passwd>?
        var buffer = [CChar](repeating: 0, count: 16_384)
        guard getpwuid_r(uid, &entry, &buffer, buffer.count, &result) == 0, let found = result?.pointee else {
            return ConfiguredUser(uid: uid, gid: gid_t(uid), name: nil)
        }
        return ConfiguredUser(uid: uid, gid: found.pw_gid, name: String(cString: found.pw_name))
    }

    static func lookUp(name: String) -> ConfiguredUser? {
        var entry = passwd(), result: UnsafeMutablePointer<passwd>?
        var buffer = [CChar](repeating: 0, count: 16_384)
        guard getpwnam_r(name, &entry, &buffer, buffer.count, &result) == 0, let found = result?.pointee else { return nil }
        return ConfiguredUser(uid: found.pw_uid, gid: found.pw_gid, name: String(cString: found.pw_name))
    }
}

enum UserKey {
    /// The largest uid: (uid_t)-1 means "no change" to setuid and chown.
    static let largestUID: UInt64 = 4_294_967_294

    /// A name, or a uid written as a string (`"4242"`): a TOML integer stays reserved for the
    /// bounded numbers of `NumericKeys`, and useradd refuses names made only of digits.
    static func read(_ table: TOMLTable, file: String) throws(ConfigError) -> ConfiguredUser? {
        guard let value = table["user"] else { return nil }
        let usage =
            "must be a user name from the user database, such as \"pinkeeper\", or a numeric uid such as \"4242\" (\"root\" keeps root)"
        guard let name = value.string, !name.isEmpty, !name.contains("\0") else { throw ConfigError(file: file, key: "user", usage) }
        if name.unicodeScalars.allSatisfy({ ("0"..."9").contains($0) }) {
            guard let number = UInt64(name), number <= largestUID else {
                throw ConfigError(file: file, key: "user", "a numeric uid must be from 0 to \(largestUID)")
            }
            return ConfiguredUser.lookUp(uid: uid_t(number))
        }
        guard let user = ConfiguredUser.lookUp(name: name) else {
            throw ConfigError(file: file, key: "user", "no user named '\(name)' in the user database: create it, or give its numeric uid")
        }
        return user
    }
}
