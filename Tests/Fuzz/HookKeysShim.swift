// Config/HookKeys.swift needs PolicyKeys and the TOML reader, which the fuzz build does not
// compile; Configuration.swift needs only this from it. Keep it equal to the original (run.sh
// rebuilds when that file changes).
extension UpdatePolicy {
    var ignoringHooks: UpdatePolicy {
        var policy = self
        policy.onChange = nil
        policy.hookTimeout = UpdatePolicy().hookTimeout
        return policy
    }
}
