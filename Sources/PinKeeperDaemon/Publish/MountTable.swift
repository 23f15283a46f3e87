/// The mount points this process sees, from /proc/self/mountinfo: the kernel's own list, which
/// names a bind mount too (a bind mount of a directory on the same file system has the same
/// st_dev as its parent, so comparing st_dev cannot tell it is a mount point).
enum MountTable {
    /// Where the mount table is read from (at most 16 MiB of it: thousands of mounts).
    static let path = "/proc/self/mountinfo"

    /// Every mount point, or nil when the table cannot be read.
    static func mountPoints(from path: String = MountTable.path) -> Set<String>? {
        let limit = ReadLimit(bytes: 16 << 20, kind: "the mount table", remedy: "run pinkeeper where it sees fewer mounts")
        guard case .success(.read(let data, _)) = readRegularFile(path, limit: limit) else { return nil }
        var points: Set<String> = []
        for line in data.split(separator: UInt8(ascii: "\n")) {
            // mount id, parent id, major:minor, root, mount point, ...
            let fields = line.split(separator: UInt8(ascii: " "), omittingEmptySubsequences: false)
            guard fields.count > 4 else { continue }
            points.insert(unescaped(fields[4]))
        }
        return points
    }

    /// The kernel writes a space, tab, newline and backslash in a path as \040, \011, \012, \134.
    static func unescaped(_ field: some Collection<UInt8>) -> String {
        let bytes = Array(field)
        var out: [UInt8] = []
        var index = 0
        while index < bytes.count {
            if bytes[index] == UInt8(ascii: "\\"), index + 3 < bytes.count, let value = octal(bytes[(index + 1)...(index + 3)]) {
                out.append(value)
                index += 4
            } else {
                out.append(bytes[index])
                index += 1
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    private static func octal(_ digits: ArraySlice<UInt8>) -> UInt8? {
        var value = 0
        for digit in digits {
            guard (UInt8(ascii: "0")...UInt8(ascii: "7")).contains(digit) else { return nil }
            value = value * 8 + Int(digit - UInt8(ascii: "0"))
        }
        return value <= 255 ? UInt8(value) : nil
    }
}
