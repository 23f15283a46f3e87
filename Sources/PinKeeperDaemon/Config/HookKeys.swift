import Glibc

/// `on_change` and `hook_timeout`, in `[defaults]` or a store.
enum HookKeys {
    static let all = ["on_change", "hook_timeout"]

    static func apply(_ table: TOMLTable, to policy: inout UpdatePolicy, file: String, store: String?) throws(ConfigError) {
        func error(_ key: String, _ problem: String) -> ConfigError { ConfigError(file: file, store: store, key: key, problem) }
        if let raw = table["on_change"] {
            let usage =
                "must be a non-empty array of strings: the program's absolute path, then its arguments, "
                + "such as [\"/usr/local/bin/reload-pins\", \"--quiet\"] (no shell runs it)"
            guard let array = raw.array, !array.isEmpty else { throw error("on_change", usage) }
            var argv: [String] = []
            for element in array {
                guard let text = element.string else { throw error("on_change", usage) }
                guard !text.contains("\0") else { throw error("on_change", "must not contain NUL characters") }
                argv.append(text)
            }
            guard argv[0].hasPrefix("/") else {
                throw error("on_change", "the program \"\(argv[0])\" must be an absolute path (no PATH search, no shell)")
            }
            guard isExecutableFile(argv[0]) else {
                throw error("on_change", "\(argv[0]) is not an executable file (check the path and its mode)")
            }
            policy.onChange = argv
        }
        if let seconds = try NumericKeys.hookTimeout.read(table, file: file, store: store) { policy.hookTimeout = seconds }
    }

    private static func isExecutableFile(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG && access(path, X_OK) == 0
    }
}
