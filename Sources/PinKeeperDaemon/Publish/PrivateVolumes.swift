import Glibc

/// The configuration's `private_volumes`, verified: each one is a directory and a mount point
/// (a volume of its own, as a Kubernetes emptyDir is in the pod's containers). `DataDirectories`
/// then lets one be an ancestor of its directories although others may write it without the
/// sticky bit: the operator states that only this pod's containers reach it, and on the node it
/// lies under kubelet's root-only pod directory (docs/decisions/0005-private-volumes.md).
struct PrivateVolumes {
    /// Each listed path as written and as it resolves.
    private(set) var paths: Set<String> = []

    static func verify(_ listed: [String], mountTable: String = MountTable.path) throws(DataDirectories.Problem) -> PrivateVolumes {
        var volumes = PrivateVolumes()
        guard !listed.isEmpty else { return volumes }
        func problem(_ path: String, _ text: String) -> DataDirectories.Problem {
            DataDirectories.Problem(key: PrivateVolumesKey.key, description: "the private volume \(path) (private_volumes) \(text)")
        }
        guard let mountPoints = MountTable.mountPoints(from: mountTable) else {
            throw problem(listed[0], "cannot be verified: \(mountTable) cannot be read (is /proc mounted?)")
        }
        for path in listed {
            var info = stat()
            guard let real = realPath(path), stat(real, &info) == 0, info.st_mode & S_IFMT == S_IFDIR else {
                throw problem(path, "is not a directory: mount the volume there, or remove it from private_volumes")
            }
            guard mountPoints.contains(real) else {
                throw problem(
                    path,
                    "is not a mount point, so it is no volume of its own that only this pod reaches: "
                        + "remove it from private_volumes (and keep others from writing its ancestors), or mount the volume there")
            }
            volumes.paths.formUnion([path, real])
        }
        return volumes
    }

    /// Whether `ancestor` (a path as written or resolved) is one of the verified volumes.
    func contains(_ ancestor: String) -> Bool { paths.contains(ancestor) }

    /// Whether `directory` resolves to one of the volumes itself (`dir/pins/..`, a symlink).
    func isVolume(_ directory: String) -> Bool { realPath(directory).map(paths.contains) ?? false }

    /// Whether `directory` lies strictly inside one of the volumes, as written.
    func holds(_ directory: String) -> Bool {
        let path = PrivateVolumesKey.normalized(directory)
        return paths.contains { path.hasPrefix($0 + "/") }
    }
}
