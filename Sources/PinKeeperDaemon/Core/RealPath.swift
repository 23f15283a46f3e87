import Glibc

/// `path` with every symlink, `.` and `..` resolved by realpath(3), or nil when it does not
/// exist (or cannot be resolved): one place for the call and the buffer it hands back to free.
func realPath(_ path: String) -> String? {
    guard let real = realpath(path, nil) else { return nil }
    defer { free(real) }
    return String(cString: real)
}
