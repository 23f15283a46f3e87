/// `private_volumes`: directories the operator states are volumes private to this pod or
/// container (a Kubernetes emptyDir), which `DataDirectories` accepts as an ancestor of its
/// directories although anyone may write them (docs/decisions/0005-private-volumes.md).
enum PrivateVolumesKey {
    static let key = "private_volumes"

    static func read(_ table: TOMLTable, file: String) throws(ConfigError) -> [String] {
        guard let value = table[key] else { return [] }
        let usage = "must be an array of absolute directory paths, such as [\"/var/cache/pinkeeper\"]"
        guard let array = value.array else { throw ConfigError(file: file, key: key, usage) }
        var paths: [String] = []
        for element in array {
            guard let path = element.string, path.hasPrefix("/"), !path.contains("\0") else {
                throw ConfigError(file: file, key: key, usage)
            }
            let volume = normalized(path)
            guard volume != "/" else {
                throw ConfigError(file: file, key: key, "cannot list /: list the mount point of each volume private to this pod")
            }
            paths.append(volume)
        }
        return paths
    }

    /// The directories pinkeeper writes must lie strictly inside a listed volume, never be one:
    /// the volume's own directory is root's and writable by anyone who mounts it, while one
    /// that pinkeeper creates inside it is its own (0755, `DataDirectories` checks it). Compared
    /// as the file system resolves them (`..`, symlinks), as `FileClaims` compares paths, so that
    /// `<volume>/pins/..` is refused here, with exit 78, and not only when the directory is made.
    static func check(_ configuration: Configuration, file: String) throws(ConfigError) {
        guard !configuration.privateVolumes.isEmpty else { return }
        let volumes = Set(configuration.privateVolumes.map(FileClaims.resolved))
        var used = [("cache_directory", configuration.cacheDirectory), ("state_directory", configuration.stateDirectory)]
        if let envoy = configuration.envoySDSDirectory { used.append(("envoy_sds_directory", envoy)) }
        if let metrics = configuration.metricsFile { used.append(("metrics_file", parent(of: FileClaims.resolved(metrics)))) }
        for (usedKey, directory) in used {
            let resolved = FileClaims.resolved(directory)
            guard volumes.contains(resolved) else { continue }
            let what = usedKey == "metrics_file" ? "is directly in" : "is"
            throw ConfigError(
                file: file, key: usedKey,
                "\(what) the private volume \(resolved) itself (private_volumes): name a directory inside it, "
                    + "such as \(resolved)/pinkeeper, which pinkeeper creates and owns")
        }
    }

    /// Without `.` components and repeated or trailing slashes: "/a//b/./" is "/a/b".
    static func normalized(_ path: String) -> String {
        "/" + path.split(separator: "/").filter { $0 != "." }.joined(separator: "/")
    }

    /// The directory a file is in, as written.
    static func parent(of file: String) -> String {
        let path = normalized(file)
        guard let slash = path.lastIndex(of: "/"), slash != path.startIndex else { return "/" }
        return String(path[..<slash])
    }
}
