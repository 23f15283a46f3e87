import Glibc

/// Gives up root for good: supplementary groups, then group, then user (after setuid, setgid
/// and setgroups would be refused), and checks that nothing of root is left and that getting
/// it back fails. glibc applies each call to every thread of the process.
enum UserSwitch {
    static func become(_ user: ConfiguredUser) throws(ServiceUser.Problem) {
        let groups = supplementaryGroups(of: user)
        func failed(_ call: String) -> ServiceUser.Problem {
            ServiceUser.Problem("cannot work as \(user.described): \(call) failed: \(String(cString: strerror(errno)))")
        }
        guard setgroups(groups.count, groups) == 0 else { throw failed("setgroups") }
        guard setgid(user.gid) == 0 else { throw failed("setgid(\(user.gid))") }
        guard setuid(user.uid) == 0 else { throw failed("setuid(\(user.uid))") }
        if let problem = leftover(user, groups: groups) {
            throw ServiceUser.Problem("cannot work as \(user.described): \(problem); pinkeeper stops rather than keep root")
        }
    }

    /// What remains of root after the switch, or nil when nothing does.
    static func leftover(_ user: ConfiguredUser, groups: [gid_t]) -> String? {
        let uids = ids(getresuid), gids = ids(getresgid)
        guard uids.allSatisfy({ $0 == user.uid }) else { return "the real, effective and saved user ids are \(uids)" }
        guard gids.allSatisfy({ $0 == user.gid }) else { return "the real, effective and saved group ids are \(gids)" }
        var current = [gid_t](repeating: 0, count: 65_536)
        let count = getgroups(Int32(current.count), &current)
        guard count >= 0, Set(current[..<Int(count)]) == Set(groups) else { return "the supplementary groups did not change" }
        // Undoing must fail: without CAP_SETUID and CAP_SETGID these calls are refused.
        if user.uid != 0 && (setuid(0) == 0 || seteuid(0) == 0) { return "it could become root again" }
        if user.gid != 0 && setgid(0) == 0 { return "it could take group root again" }
        if setgroups(0, nil) == 0 { return "it could still change its groups" }
        return nil
    }

    /// The user database's groups of a named user (as login(1) gives them), else none.
    static func supplementaryGroups(of user: ConfiguredUser) -> [gid_t] {
        guard let name = user.name else { return [] }
        var count: Int32 = 64
        while true {
            var groups = [gid_t](repeating: 0, count: Int(count))
            let previous = count
            if getgrouplist(name, user.gid, &groups, &count) >= 0 { return Array(groups[..<Int(count)]) }
            if count <= previous { count = previous * 2 }  // glibc sets the size it needs
            if count > 65_536 { return [user.gid] }
        }
    }

    /// getresuid and getresgid, which Swift's Glibc module does not import.
    private typealias ResultIDs =
        @convention(c) (UnsafeMutablePointer<UInt32>?, UnsafeMutablePointer<UInt32>?, UnsafeMutablePointer<UInt32>?) -> Int32
    private static let getresuid: ResultIDs? = symbol("getresuid")
    private static let getresgid: ResultIDs? = symbol("getresgid")

    private static func symbol(_ name: String) -> ResultIDs? {
        guard let address = dlsym(UnsafeMutableRawPointer(bitPattern: 0), name) else { return nil }
        return unsafeBitCast(address, to: ResultIDs.self)
    }

    /// Real, effective and saved; [UInt32.max] when they cannot be read (which fails the check).
    private static func ids(_ call: ResultIDs?) -> [UInt32] {
        var real: UInt32 = 0, effective: UInt32 = 0, saved: UInt32 = 0
        guard let call, call(&real, &effective, &saved) == 0 else { return [UInt32.max] }
        return [real, effective, saved]
    }
}
