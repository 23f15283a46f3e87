public import PinKeeper

/// The validated configuration. Immutable: a reload builds a new value and swaps it in whole.
public struct Configuration: Sendable {
    public var cacheDirectory: String
    public var stateDirectory: String
    public var metricsFile: String?
    /// How many stores an update pass (`run` and `update`) fetches at once.
    public var concurrency = Configuration.defaultConcurrency
    /// How events are written on stderr when it is not the journal.
    public var logFormat = LogFormat.logfmt
    /// `run` reloads by itself when the configuration files change (`ConfigWatcher`).
    public var watchConfiguration = false
    /// `envoy_sds_directory`: where each store's pins are written as Envoy SDS secrets (nil: nowhere).
    public var envoySDSDirectory: String?
    /// `user`: whom to work as when started as root (nil: the owner of the cache directory).
    public var user: ConfiguredUser? = nil
    /// `private_volumes`: mount points only this pod reaches, accepted as an ancestor of the
    /// directories pinkeeper writes although others may write them (`PrivateVolumes`).
    public var privateVolumes: [String] = []
    /// Stores in id order.
    public var stores: [StoreConfig]
    /// The files this configuration was read from, for messages.
    public var sources: [String]

    public func store(_ id: String) -> StoreConfig? { stores.first { $0.id == id } }

    /// Every store of a usual host in one round: a pass's transfers share one libcurl driver
    /// thread per ca_file and proxy (`CurlDriver`), so a slot costs a task and a response buffer,
    /// not a thread; at 8, 50 stores on a 100 ms server took 3x one store, at 64 1.5x.
    public static let defaultConcurrency = 64
    /// 64 already saturates any pinning service a host talks to; more would only open more sockets.
    public static let concurrencyRange = 1...64
}

/// Timing and size limits (and the proxy and hook); `[defaults]` provides them and a store may
/// override each one. Equal when fetches would be the same: the hook is `FetchNeutral`.
public struct UpdatePolicy: Sendable, Equatable {
    public var periodicUpdateInterval: Int64 = 7 * 86_400
    public var expirationUpdateThreshold: Int64 = 14 * 86_400
    public var requestTimeout: Int64 = 30
    public var maxResponseSize: Int = 1 << 20
    public var retryMin: Int64 = 30
    public var retryMax: Int64 = 3_600
    /// Not a limit, but set in `[defaults]` and per store the same way.
    public var proxy: ProxySetting = .environment
    /// `authoritative`: a verified challenge-mode response is the server's whole list, so the
    /// pins it no longer names are dropped (false: Wultra's merge, pins leave only by expiring).
    /// Counts for a reload: switched on, the store is fetched at once and the drop happens then.
    public var authoritative = false
    /// `on_change`: the program (absolute path) and arguments run after a publish that changed the pins.
    @FetchNeutral public var onChange: [String]? = nil
    /// `hook_timeout`, seconds: then SIGTERM to the hook's process group, SIGKILL after a grace period.
    @FetchNeutral public var hookTimeout: Int64 = 30

    public init() {}
}

/// One `[stores.ID]`. Equal when a fetch of the store would be the same, so a reload fetches a
/// store again exactly when its configuration is not `==` the running one. Every setting counts
/// unless it is `FetchNeutral`: where the store was written (moving its table to another file
/// changes nothing it fetches), its hook (`UpdatePolicy`) and its probes (`ProbeSchedule`
/// compares them itself and probes again when they change).
public struct StoreConfig: Sendable, Equatable {
    public var id: String
    public var url: String
    public var publicKeys: [PublicKey]
    public var mode: ListMode
    public var expectedCommonNames: [String]?
    public var fallbackFile: String?
    public var caFile: String?
    public var policy: UpdatePolicy
    /// The hosts whose served certificates are checked against this store's pins.
    @FetchNeutral public var probe = ProbeSettings()
    /// The file that defined this store, for messages.
    @FetchNeutral public var definedIn: String

    public init(
        id: String, url: String, publicKeys: [PublicKey], mode: ListMode = .challenge,
        expectedCommonNames: [String]? = nil, fallbackFile: String? = nil, caFile: String? = nil,
        policy: UpdatePolicy = UpdatePolicy(), definedIn: String = ""
    ) {
        self.id = id
        self.url = url
        self.publicKeys = publicKeys
        self.mode = mode
        self.expectedCommonNames = expectedCommonNames
        self.fallbackFile = fallbackFile
        self.caFile = caFile
        self.policy = policy
        self.definedIn = definedIn
    }
}
