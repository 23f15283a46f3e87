import FoundationEssentials
import Glibc
public import Logging

/// The `metrics_file` setting: after every update pass the daemon replaces this file with the
/// text of `pinkeeper status --format prometheus`, atomically (node_exporter's textfile
/// collector reads `*.prom` files and must never see a partial one; the temporary file is
/// hidden and does not end in `.prom`).
public enum MetricsFile {
    /// The textfile collector's directory is often shared with node_exporter's group and owned
    /// by its user, so only a directory writable by everyone is refused.
    public static let writer = AtomicWriter(refusedDirectoryBits: S_IWOTH, refusesForeignOwner: false)

    /// Writes the metrics of every configured store; does nothing when `metrics_file` is unset.
    public static func write(configuration: Configuration, now: Int64, writer: AtomicWriter = MetricsFile.writer) throws(FileError) {
        guard let path = configuration.metricsFile else { return }
        let text = StatusReport.collect(configuration: configuration, now: now).prometheus()
        let file = URL(fileURLWithPath: path)
        try writer.write(Data(text.utf8), to: file.lastPathComponent, in: file.deletingLastPathComponent().path, mode: 0o644)
    }

    /// `write`, with a failure logged as a warning instead of thrown: metrics must never stop updates.
    public static func update(configuration: Configuration, now: Int64, writer: AtomicWriter = MetricsFile.writer, logger: Logger) {
        do {
            try write(configuration: configuration, now: now, writer: writer)
        } catch {
            logger.warning(
                "cannot write the metrics file",
                metadata: [
                    "file": "\(configuration.metricsFile ?? "")", "reason": "\(error)",
                ])
        }
    }
}
