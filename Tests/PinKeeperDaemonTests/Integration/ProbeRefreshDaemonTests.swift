import Foundation
import Glibc
import PinKeeper
import PinKeeperDaemon
import TestSupport
import Testing

/// A probe that finds its host unpinned makes `pinkeeper run` fetch the store at once (no
/// SIGUSR1), at most once per `min_probe_refresh`, never through a failing store's back-off;
/// the journal names the probe, and status and the metrics count the fetches.
@Suite("Fetches that the daemon's probes ask for", .serialized)
struct ProbeRefreshDaemonTests {
    /// The probe world's store `api` on a pinning service `lists`, its cache already published
    /// from there with `pins` (so that nothing but a probe makes the daemon fetch before tomorrow).
    private func world(_ label: String, lists: FixtureServer, pins: [Pin], keys: String) throws -> ProbeWorld {
        let probe = try ProbeWorld(label)
        let caFile = TestEnvironment.certificate("ca.pem")
        try probe.configure(probe.probeKeys(extra: "ca_file = \"\(caFile)\"\n" + keys), url: lists.url("api"))
        try probe.world.publish("api", try keyed(pins), source: lists.url("api"), mode: .challenge)
        return probe
    }

    /// Pins as an update verified them (with the configured key's id; the file says challenge
    /// mode): a file without them would make the daemon fetch the store at start, to confirm them.
    private func keyed(_ pins: [Pin]) throws -> [Pin] {
        let id = try PublicKey(base64: TestEnvironment.publicKey(1)).id
        return pins.map { pin in
            var pin = pin
            pin.key = id
            return pin
        }
    }

    private func outcome(_ probe: ProbeWorld) -> String? { record(probe)?["outcome"] as? String }

    /// The target's record in `<state>/api.probes.json`.
    private func record(_ probe: ProbeWorld) -> [String: Any]? {
        let file = probe.world.state.appendingPathComponent("api.probes.json")
        guard let data = try? Data(contentsOf: file),
            let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
            let targets = object["targets"] as? [[String: Any]]
        else { return nil }
        return targets.first
    }

    /// Whether the last probe found the host serving the leaf `fingerprint` with `outcome`.
    private func serves(_ probe: ProbeWorld, _ fingerprint: String, outcome expected: String) -> Bool {
        guard let record = record(probe) else { return false }
        return record["outcome"] as? String == expected && record["leafFingerprint"] as? String == fingerprint
    }

    private func wait(_ seconds: TimeInterval, until condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if condition() { return true }
            usleep(50_000)
        }
        return condition()
    }

    private func refreshLines(_ stderr: String) -> [String] {
        stderr.split(separator: "\n").map(String.init).filter { $0.contains("event=probe-refresh") }
    }

    /// `status --json`'s `probeRefreshes` for store `api`, and the Prometheus counter's sample line.
    private func counted(_ probe: ProbeWorld) throws -> (Int?, Bool, String) {
        let status = probe.world.run("status", ["--json"])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any])
        let store = try #require((object["stores"] as? [[String: Any]])?.first)
        let metrics = probe.world.run("status", ["--format", "prometheus"]).stdout
        let typed = metrics.contains("# TYPE pinkeeper_store_probe_refreshes_total counter\n")
        let sample = metrics.split(separator: "\n").first { $0.hasPrefix("pinkeeper_store_probe_refreshes_total{") }
        return (store["probeRefreshes"] as? Int, typed, sample.map(String.init) ?? "")
    }

    @Test("the host rotates to a certificate the pinning service already lists: pinned again within seconds, no SIGUSR1")
    func rotatedToListedCertificate() throws {
        let lists = try FixtureServer()
        let probe = try ProbeWorld("refresh-rotate")
        probe.pki.leaf("next", issuer: "intermediate", host: ProbeWorld.name)
        probe.pki.bundle("served-next", ["next", "intermediate"])
        let leafFingerprint = probe.fingerprint("leaf"), nextFingerprint = probe.fingerprint("next")
        let next: [String: Any] = ["name": ProbeWorld.name, "fingerprint": nextFingerprint, "expires": Lists.future]
        let leaf: [String: Any] = ["name": ProbeWorld.name, "fingerprint": leafFingerprint, "expires": Lists.future]
        try lists.route("api", Lists.route(entries: [leaf, next]))
        let caFile = TestEnvironment.certificate("ca.pem")
        try probe.configure(
            probe.probeKeys(extra: "ca_file = \"\(caFile)\"\nprobe_interval = \"10s\"\nmin_probe_refresh = \"10s\""),
            url: lists.url("api"))
        try probe.world.publish("api", try keyed([probe.pin("leaf")]), source: lists.url("api"), mode: .challenge)

        let daemon = try DaemonProcess(config: probe.world.config.path)
        #expect(wait(30) { serves(probe, leafFingerprint, outcome: "pinned") }, "never pinned before the rotation")
        #expect(lists.requests("api").isEmpty, "the store was not due: nothing but a probe may fetch it")

        // The host now serves the next certificate, on the same address.
        let port = probe.server.port
        probe.server.stop()
        let server = try FixtureServer(certificateFile: probe.pki.pem("served-next"), keyFile: probe.pki.key("served-next"), port: port)
        // The next probe (10 s at most) finds the host unpinned; the fetch it causes publishes the
        // next certificate's pin, and the probe that follows finds the host pinned again.
        // (10 s here, plus room for a loaded machine; the store's regular update is a day away.)
        #expect(wait(30) { serves(probe, nextFingerprint, outcome: "pinned") }, "not pinned again without SIGUSR1")
        daemon.signal(SIGTERM)
        #expect(daemon.waitForExit(timeout: 5) == 0)

        #expect(lists.requests("api").count == 1)
        let lines = refreshLines(daemon.stderr)
        #expect(lines.count == 1, "\(lines)")
        let line = try #require(lines.first)
        #expect(line.isLog("info", "a probe asks for the store's current pins; updating it now"), "\(line)")
        for field in ["store=api", "target=api.example.test:443", "outcome=unpinned", "min_probe_refresh=10s"] {
            #expect(line.contains(field), "\(field) in \(line)")
        }
        let (count, typed, sample) = try counted(probe)
        #expect(count == 1)
        #expect(typed)
        #expect(sample == "pinkeeper_store_probe_refreshes_total{store=\"api\"} 1")
        let table = probe.world.run("status", []).stdout
        #expect(table.contains("api: 1 update asked for by probes (see min_probe_refresh)\n"), "\(table)")
        let changes = daemon.stderr.split(separator: "\n").filter { $0.contains("event=probe-") && !$0.contains("probe-refresh") }
        #expect(changes.suffix(2).map { $0.contains("outcome=unpinned") && !$0.contains("previous=unpinned") } == [true, false])
        #expect(changes.last.map { $0.contains("outcome=pinned") && $0.contains("previous=unpinned") } == true, "\(changes)")
        withExtendedLifetime(server) {}
    }

    @Test("the pinning service does not list the served certificate: one fetch per min_probe_refresh, no storm")
    func unlistedCertificate() throws {
        let lists = try FixtureServer()
        let other = Pin(name: ProbeWorld.name, fingerprint: [UInt8](repeating: 9, count: 32), expires: ReaderWorld.future)
        try lists.route("api", Lists.route(entries: [Lists.entry(ProbeWorld.name, 9)]))
        let probe = try world(
            "refresh-unlisted", lists: lists, pins: [other], keys: "probe_interval = \"10s\"\nmin_probe_refresh = \"10s\"")

        let started = Date()
        let daemon = try DaemonProcess(config: probe.world.config.path)
        #expect(wait(10) { !lists.requests("api").isEmpty }, "no fetch after the unpinned probe: \(daemon.stderr)")
        let first = Date().timeIntervalSince(started)
        usleep(24_000_000)
        daemon.signal(SIGTERM)
        #expect(daemon.waitForExit(timeout: 5) == 0)

        #expect(outcome(probe) == "unpinned")
        let times = lists.requests("api").map(\.time)
        // The first fetch follows the first probe; then one every 10 s while the host stays unpinned.
        #expect(first < 8, "the first fetch came \(first) s after the start")
        #expect((2...3).contains(times.count), "\(times.count) fetches in about 25 s: \(times)")
        for (earlier, later) in zip(times, times.dropFirst()) {
            #expect(later - earlier > 8.9, "two fetches \(later - earlier) s apart: \(times)")
        }
        #expect(refreshLines(daemon.stderr).count == times.count)
        let (count, _, sample) = try counted(probe)
        #expect(count == times.count)
        #expect(sample == "pinkeeper_store_probe_refreshes_total{store=\"api\"} \(times.count)")
    }

    @Test("a failing pinning service (503): the back-off holds, also across a restart")
    func failingServiceKeepsBackoff() throws {
        let lists = try FixtureServer()
        let other = Pin(name: ProbeWorld.name, fingerprint: [UInt8](repeating: 9, count: 32), expires: ReaderWorld.future)
        try lists.route("api", Lists.route(entries: [Lists.entry(ProbeWorld.name, 9)], extra: ["status": 503]))
        let probe = try world(
            "refresh-failing", lists: lists, pins: [other],
            keys: "probe_interval = \"10s\"\nmin_probe_refresh = \"10s\"\nretry_min = \"2m\"")

        let daemon = try DaemonProcess(config: probe.world.config.path)
        #expect(wait(10) { lists.requests("api").count == 1 }, "no fetch after the unpinned probe: \(daemon.stderr)")
        // Two more probe passes find the host unpinned; the retry is 2 minutes away.
        usleep(22_000_000)
        daemon.signal(SIGTERM)
        #expect(daemon.waitForExit(timeout: 5) == 0)
        #expect(lists.requests("api").count == 1, "\(lists.requests("api").map(\.time))")
        #expect(lists.requests("api").first?.status == 503)

        let state = StateDirectory(path: probe.world.state.path).load(store: "api")
        #expect(state.consecutiveFailures == 1)
        let firstFetch = Int64(lists.requests("api").first?.time ?? 0)
        #expect((state.retryAt ?? 0) >= firstFetch + 119)
        #expect(state.probeRefreshes == 1)

        // Restarted with the failure on record: the unpinned probe at start fetches nothing either.
        let restarted = try DaemonProcess(config: probe.world.config.path)
        usleep(12_000_000)
        restarted.signal(SIGTERM)
        #expect(restarted.waitForExit(timeout: 5) == 0)
        #expect(outcome(probe) == "unpinned")
        #expect(lists.requests("api").count == 1, "\(restarted.stderr)")
        #expect(refreshLines(restarted.stderr).isEmpty)
    }
}
