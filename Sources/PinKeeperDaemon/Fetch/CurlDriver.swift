import CCurl
import Synchronization

/// Runs transfers on one libcurl multi handle, from one thread of its own, so that the stores of a
/// pass on the same server share connections, TLS sessions and DNS answers: libcurl keeps those
/// per multi handle (and, for TLS sessions, per share handle), and a connection may only be used
/// by one thread at a time, so one thread drives them all.
///
/// Transfers with a different `ca_file` or proxy setting go to different drivers (`Key`): they
/// never share a connection or a TLS session, whatever libcurl's own matching rules would allow.
/// A driver's thread, handles and idle connections end once no transfer came for `linger`: an
/// idle daemon, whose passes are minutes or hours apart, holds no sockets and no thread that wakes
/// up. libcurl itself stays loaded (`CurlLibrary`); the next transfer starts a new thread.
final class CurlDriver: @unchecked Sendable {  // safe: `shared` is locked; the rest is confined to the driver thread
    struct Key: Hashable {
        var caFile: String?
        var proxy: String
        var linger: Duration

        init(_ request: HTTPRequest, linger: Duration) {
            self.linger = linger
            caFile = request.caFile
            switch request.proxy {
            case .environment: proxy = "environment"
            case .direct: proxy = "direct"
            case .http(let url): proxy = "http " + url
            }
        }
    }

    private static let drivers = Mutex<[Key: CurlDriver]>([:])

    /// The driver for the request's trust and proxy settings (made on first use).
    static func `for`(_ request: HTTPRequest, linger: Duration = defaultLinger) -> CurlDriver {
        drivers.withLock { drivers in
            let key = Key(request, linger: linger)
            if let driver = drivers[key] { return driver }
            let driver = CurlDriver(linger: linger)
            drivers[key] = driver
            return driver
        }
    }

    /// Long enough to keep connections between the stores of one pass (a big static list may take
    /// seconds to verify before the next store's turn), shorter than servers keep idle connections.
    static let defaultLinger: Duration = .seconds(10)
    let linger: Duration

    private init(linger: Duration) { self.linger = linger }
    /// Idle connections kept: one per transfer a pass can run at once.
    static let maxConnections = Configuration.concurrencyRange.upperBound

    private struct Shared {
        var queue: [CurlTransfer] = []
        var running = false
        /// The multi handle's address while the thread runs (0 otherwise); raw pointers are not Sendable.
        var multi: UInt = 0
    }
    private let shared = Mutex(Shared())

    /// Hands a transfer to the driver thread (starting it if needed); the transfer completes itself.
    func submit(_ transfer: CurlTransfer) {
        let start = shared.withLock { state -> Bool in
            state.queue.append(transfer)
            if state.running {
                if let multi = UnsafeMutableRawPointer(bitPattern: state.multi) { _ = pk_curl_multi_wakeup(multi) }
                return false
            }
            state.running = true
            return true
        }
        guard start else { return }
        // libcurl is loaded: the submitting fetch loaded it, and it is never unloaded.
        BlockingWork.start(named: "pinkeeper-curl") { [self] in drive() }
    }

    /// Interrupts the driver's wait so it notices a cancelled transfer at once.
    func wake() {
        shared.withLock { state in
            if let multi = UnsafeMutableRawPointer(bitPattern: state.multi) { _ = pk_curl_multi_wakeup(multi) }
        }
    }

    private func drive() {
        guard let multi = pk_curl_multi_init() else {
            let queued = shared.withLock { state in
                state.running = false
                defer { state.queue = [] }
                return state.queue
            }
            for transfer in queued { transfer.complete(.failure(UpdateFailure(.networkError, "curl_multi_init failed"))) }
            return
        }
        // TLS sessions are per easy handle unless shared: the share lets a new connection of this
        // driver resume a session another store's transfer verified under the same settings.
        // Only this thread uses it, so it needs no lock callbacks.
        let share = pk_curl_share_init()
        if let share { _ = pk_curl_share_data(share, CURL_LOCK_DATA_SSL_SESSION) }
        // A fixed pool: libcurl's default (4 per handle currently added) shrinks between two stores
        // of a pass and closes the connections the next ones could use.
        _ = pk_curl_multi_set_long(multi, CURLMOPT_MAXCONNECTS, Self.maxConnections)
        shared.withLock { $0.multi = UInt(bitPattern: multi) }
        var active: [CurlTransfer] = []
        var idleSince = ContinuousClock.now
        while true {
            let incoming = shared.withLock { state in
                defer { state.queue = [] }
                return state.queue
            }
            for transfer in incoming where transfer.start(in: multi, share: share) { active.append(transfer) }
            active.removeAll { transfer in
                guard transfer.isCancelled else { return false }
                transfer.finish(in: multi, code: CURLE_ABORTED_BY_CALLBACK)
                return true
            }
            if !active.isEmpty {
                perform(multi, &active)
                idleSince = ContinuousClock.now
            }
            if active.isEmpty {
                let left = linger - (ContinuousClock.now - idleSince)
                let stop = shared.withLock { state in
                    guard state.queue.isEmpty, left <= .zero else { return false }
                    state.running = false
                    state.multi = 0
                    return true
                }
                if stop { break }
                _ = pk_curl_multi_poll(multi, nil, 0, Int32(max(1, left.milliseconds)), nil)
            } else {
                _ = pk_curl_multi_poll(multi, nil, 0, 1000, nil)
            }
        }
        pk_curl_multi_cleanup(multi)  // closes the idle connections
        if let share { pk_curl_share_cleanup(share) }
        // `linger` after the last transfer, with its connections, TLS state and trust store just
        // freed, the pass's work is over and the process may sleep for hours.
        HeapSettings.releaseFreeMemory()
    }

    /// One round of transfers: whatever libcurl can do now, and each finished one handed back.
    private func perform(_ multi: UnsafeMutableRawPointer, _ active: inout [CurlTransfer]) {
        var running: Int32 = 0
        let performed = pk_curl_multi_perform(multi, &running)
        var pending: Int32 = 0
        while let message = pk_curl_multi_info_read(multi, &pending) {
            guard message.pointee.msg == CURLMSG_DONE,
                let index = active.firstIndex(where: { $0.easy == message.pointee.easy_handle })
            else { continue }
            active.remove(at: index).finish(in: multi, code: message.pointee.data.result)
        }
        if performed != CURLM_OK {
            for transfer in active { transfer.finish(in: multi, code: CURLE_RECV_ERROR) }
            active = []
        }
    }
}

private extension Duration {
    var milliseconds: Int64 { components.seconds * 1000 + components.attoseconds / 1_000_000_000_000_000 }
}
