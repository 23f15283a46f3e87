import FoundationEssentials

/// One store's probe results and next probe time, as the daemon keeps them so that `status`
/// (another process) can show them and a restart neither re-logs an unchanged outcome nor
/// probes earlier than planned.
public struct StoreProbes: Sendable, Codable, Equatable {
    /// When the daemon probes this store's targets next, in Unix seconds.
    public var next: Int64?
    public var targets: [ProbeRecord] = []

    public init(next: Int64? = nil, targets: [ProbeRecord] = []) {
        self.next = next
        self.targets = targets
    }

    public func record(for target: String) -> ProbeRecord? { targets.first { $0.target == target } }
}

/// `<state_directory>/<store>.probes.json`, beside the store's state file, written atomically.
public struct ProbeStateDirectory: Sendable {
    public var path: String
    public var writer: AtomicWriter

    public init(path: String, writer: AtomicWriter = AtomicWriter()) {
        self.path = path
        self.writer = writer
    }

    public func fileName(for store: String) -> String { Self.fileName(store: store) }
    static func fileName(store: String) -> String { StoreFiles.probes(store) }

    /// Nothing known when the file is missing or unreadable: probe results are advisory.
    public func load(store: String) -> StoreProbes {
        guard case .success(.read(let data, _)) = readRegularFile("\(path)/\(fileName(for: store))", limit: .probeFile),
            let probes = try? JSONDecoder().decode(StoreProbes.self, from: data)
        else { return StoreProbes() }
        return probes
    }

    public func save(_ probes: StoreProbes, store: String) throws(FileError) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        guard let data = try? encoder.encode(probes) else { return }
        AtomicWriter.removeStaleTemps(for: fileName(for: store), in: path)
        try writer.write(data, to: fileName(for: store), in: path, mode: 0o644)
    }
}
