import Glibc
public import Logging
import PinKeeper

/// Puts a store's `EnvoySecrets` in `<envoy_sds_directory>/<store>/`, one atomic rename per
/// changed file (Envoy's `watched_directory` notices a rename into the directory). A file whose
/// name left the store is not removed, because Envoy keeps the last secret it read when its file
/// disappears: it is rewritten with a hash that matches nothing.
public struct EnvoySecretWriter: Sendable {
    public var directory: String
    public var writer = AtomicWriter()
    public var logger: Logger

    public init(directory: String, logger: Logger) {
        self.directory = directory
        self.logger = logger
    }

    public func storeDirectory(_ store: String) -> String { directory + "/" + store }

    /// Writes what changed; returns how many files were written.
    @discardableResult
    public func write(_ secrets: EnvoySecrets, store: String) -> Int {
        let path = storeDirectory(store)
        guard makeDirectory(path, store: store) else { return 0 }
        for name in secrets.skipped {
            logger.warning(
                "a name of the store is not a DNS name or IP address; no Envoy secret is written for it",
                metadata: ["store": "\(store)", "name": "\(LogText.escaped(name))"])
        }
        var written = 0
        var wanted = secrets.files
        for file in existingSecrets(in: path) where wanted[file] == nil {
            wanted[file] = EnvoySecrets.render(name: String(file.dropLast(5)), hashes: [EnvoySecrets.neverMatches])
        }
        for (file, text) in wanted.sorted(by: { $0.key < $1.key }) where current(file, in: path) != text {
            do {
                try writer.write(Array(text.utf8), to: file, in: path)
                written += 1
                if secrets.files[file] == nil {
                    logger.notice(
                        "a name left the store; its Envoy secret now matches no certificate",
                        metadata: ["store": "\(store)", "file": "\(path)/\(file)"])
                } else if let reason = secrets.warnings[file] {
                    logger.warning(
                        "\(reason); its Envoy secret matches no certificate", metadata: ["store": "\(store)", "file": "\(path)/\(file)"])
                }
            } catch {
                logger.error(
                    "cannot write an Envoy secret; Envoy keeps the one it read last",
                    metadata: ["store": "\(store)", "file": "\(path)/\(file)", "reason": "\(error)"])
            }
        }
        return written
    }

    /// Every secret of a store that left the configuration matches nothing from now on.
    public func retire(store: String) {
        write(EnvoySecrets(), store: store)
    }

    private func makeDirectory(_ path: String, store: String) -> Bool {
        if mkdir(path, 0o755) == 0 || errno == EEXIST { return true }
        logger.error(
            "cannot create the store's Envoy secret directory",
            metadata: ["store": "\(store)", "directory": "\(path)", "reason": "\(String(cString: strerror(errno)))"])
        return false
    }

    /// The `*.yaml` files in the store's directory (temporary files start with a dot).
    private func existingSecrets(in path: String) -> [String] {
        guard let dir = opendir(path) else { return [] }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name.hasSuffix(".yaml"), !name.hasPrefix("."), name.count > 5 { names.append(name) }
        }
        return names
    }

    /// The file's text, nil when it cannot be read as a small regular file.
    private func current(_ file: String, in path: String) -> String? {
        let fd = open(path + "/" + file, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG, info.st_size < 1 << 20 else { return nil }
        var bytes = [UInt8](repeating: 0, count: Int(info.st_size))
        let count = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        return count == bytes.count ? String(decoding: bytes, as: UTF8.self) : nil
    }
}
