import Foundation
import Glibc
import PinKeeper
import PinKeeperDaemon
import TestSupport
import Testing

/// Probes in `pinkeeper run`: outcomes logged once per change, recorded for `status` and the
/// metrics file, and a hung target that holds up neither the watchdog, nor updates, nor shutdown.
@Suite("The daemon's probes", .serialized)
struct ProbeDaemonTests {
    /// Waits until `<state>/<store>.probes.json` satisfies `condition`; returns its JSON.
    private func probes(
        _ world: ReaderWorld, _ store: String, timeout: TimeInterval = 20,
        until condition: ([[String: Any]]) -> Bool
    ) -> [[String: Any]]? {
        let file = world.state.appendingPathComponent("\(store).probes.json")
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if let data = try? Data(contentsOf: file),
                let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
                let targets = object["targets"] as? [[String: Any]], condition(targets)
            {
                return targets
            }
            usleep(50_000)
        }
        return nil
    }

    private func probeLines(_ stderr: String) -> [String] {
        stderr.split(separator: "\n").map(String.init).filter { $0.contains("probed host") || $0.contains("probe failed") }
    }

    @Test("every outcome at once: each logged at its level, shown by status (exit 1), in the metrics file")
    func everyOutcome() throws {
        let probe = try ProbeWorld("daemon-all")
        let world = probe.world
        let metrics = world.root.appendingPathComponent("pinkeeper.prom").path
        let other = Pin(name: ProbeWorld.name, fingerprint: [UInt8](repeating: 9, count: 32), expires: ReaderWorld.future)
        let stores: [(String, String, [Pin])] = [
            ("depth0", probe.probeKeys(), [probe.pin("leaf")]),
            ("depth1", probe.probeKeys(), [probe.pin("intermediate", depth: 1)]),
            ("unpinned", probe.probeKeys(), [other]),
            ("expiring", probe.probeKeys(), [probe.pin("leaf", expires: ReaderWorld.now + 1_800)]),
            ("failing", probe.probeKeys(target: "www.example.test"), [probe.pin("leaf")]),
        ]
        try world.configure(
            stores.map { .init(id: $0.0, extra: $0.1, url: "https://127.0.0.1:1/\($0.0)") },
            topLevel: "metrics_file = \"\(metrics)\"")
        for (id, _, pins) in stores { try world.publish(id, pins) }

        let daemon = try DaemonProcess(config: world.config.path)
        let expected = ["depth0": "pinned", "depth1": "pinned", "unpinned": "unpinned", "expiring": "expiring", "failing": "error"]
        for (store, outcome) in expected {
            let found = probes(world, store) { $0.first?["outcome"] as? String != nil }
            #expect(found?.first?["outcome"] as? String == outcome, "\(store): \(String(describing: found))")
        }
        // The metrics file is rewritten after the probe pass.
        let deadline = Date().addingTimeInterval(10)
        while !((try? String(contentsOfFile: metrics, encoding: .utf8)) ?? "").contains("outcome=\"error\"} 1"), Date() < deadline {
            usleep(50_000)
        }
        daemon.signal(SIGTERM)
        #expect(daemon.waitForExit(timeout: 5) == 0)

        let lines = probeLines(daemon.stderr)
        #expect(lines.count == 5, "\(lines)")
        let unpinned = try #require(lines.first { $0.contains("store=unpinned") })
        #expect(unpinned.isLog("error", "probed host serves a certificate no pin matches; clients enforcing the store fail now"))
        for field in [
            "outcome=unpinned", "previous=none", "target=api.example.test:443", "peer=127.0.0.1:\(probe.server.port)",
            "leaf_fingerprint=\"\(probe.fingerprint("leaf"))\"", "leaf_expires=\(Timestamp.iso(probe.notAfter("leaf")))",
        ] {
            #expect(unpinned.contains(field), "\(field) in \(unpinned)")
        }
        #expect(
            lines.first { $0.contains("store=expiring") }?.isLog(
                "warning", "probed host serves a pinned certificate whose pins run out soon") == true)
        #expect(lines.first { $0.contains("store=failing") }?.isLog("warning", "probe failed; no verdict") == true)
        #expect(lines.filter { $0.isLog("info", "probed host serves a pinned certificate") }.count == 2)

        let status = world.run("status", ["--json"])
        #expect(status.status == 1, "\(status.stdout)\(status.stderr)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any])
        let listed = try #require(object["probes"] as? [[String: Any]])
        #expect(Dictionary(uniqueKeysWithValues: listed.map { ($0["store"] as? String ?? "", $0["outcome"] as? String ?? "") }) == expected)
        let depth0 = try #require(listed.first { $0["store"] as? String == "depth0" })
        #expect(depth0["target"] as? String == "api.example.test:443")
        #expect(depth0["connectTo"] as? String == "127.0.0.1:\(probe.server.port)")
        #expect(depth0["leafFingerprint"] as? String == probe.fingerprint("leaf"))
        #expect(depth0["leafExpires"] as? Int64 == probe.notAfter("leaf"))
        #expect((depth0["checked"] as? Int64 ?? 0) > ReaderWorld.now - 60)

        let table = world.run("status", [])
        #expect(table.status == 1)
        #expect(table.stdout.contains("unpinned: probe api.example.test:443 unpinned: the served chain matches none"), "\(table.stdout)")
        #expect(table.stdout.contains("failing: probe www.example.test:443 error: TLS verification for www.example.test failed"))

        let prometheus = try String(contentsOfFile: metrics, encoding: .utf8)
        #expect(prometheus == world.run("status", ["--format", "prometheus"]).stdout)
        for (store, outcome) in expected {
            let target = store == "failing" ? "www.example.test:443" : "api.example.test:443"
            #expect(prometheus.contains("pinkeeper_probe_outcome{store=\"\(store)\",target=\"\(target)\",outcome=\"\(outcome)\"} 1"))
        }
        #expect(
            prometheus.contains(
                "pinkeeper_probe_leaf_expiry_timestamp_seconds{store=\"depth0\",target=\"api.example.test:443\"} \(probe.notAfter("leaf"))")
        )
        // A handshake per probe, never an HTTP request.
        #expect(probe.server.requests().isEmpty)
    }

    @Test("unpinned, then a list update pins the served certificate: two lines in all; a restart repeats none")
    func outcomeChanges() throws {
        let probe = try ProbeWorld("daemon-change")
        let lists = try FixtureServer()
        let other = Lists.entry(ProbeWorld.name, 9)
        let leaf: [String: Any] = ["name": ProbeWorld.name, "fingerprint": probe.fingerprint("leaf"), "expires": Lists.future]
        try lists.route("api", Lists.route(entries: [other]))
        try probe.configure(probe.probeKeys(extra: "ca_file = \"\(TestEnvironment.certificate("ca.pem"))\""), url: lists.url("api"))

        let notify = try NotifySocket()
        let daemon = try DaemonProcess(config: probe.world.config.path, environment: ["NOTIFY_SOCKET": notify.address])
        let first = probes(probe.world, "api") { $0.first?["outcome"] as? String == "unpinned" }
        #expect(first != nil, "never unpinned: \(daemon.stderr)")
        #expect(probe.world.run("status", []).status == 1)
        // systemctl status shows it too.
        let line = notify.collect(until: { $0.contains("probes:") }, timeout: 10).last ?? ""
        #expect(line.hasPrefix("STATUS=1 store: 1 fresh; next update in "), "\(line)")
        #expect(line.hasSuffix("; probes: 1 unpinned (api api.example.test:443 unpinned)"), "\(line)")

        // The pinning service learns the new certificate; the next update publishes it, and the
        // probe that follows a published list finds the host pinned.
        try lists.route("api", Lists.route(entries: [other, leaf]))
        daemon.signal(SIGUSR1)
        let pinned = probes(probe.world, "api") { $0.first?["outcome"] as? String == "pinned" }
        #expect(pinned != nil, "never pinned: \(daemon.stderr)")
        #expect(probe.world.run("status", []).status == 0)

        // Probed again with the same outcome: no line.
        let checked = pinned?.first?["checked"] as? Int64 ?? 0
        usleep(1_100_000)
        daemon.signal(SIGUSR1)
        let again = probes(probe.world, "api") { ($0.first?["checked"] as? Int64 ?? 0) > checked }
        #expect(again?.first?["outcome"] as? String == "pinned")
        #expect(again?.first?["since"] as? Int64 == pinned?.first?["since"] as? Int64)
        daemon.signal(SIGTERM)
        #expect(daemon.waitForExit(timeout: 5) == 0)
        let lines = probeLines(daemon.stderr)
        #expect(lines.count == 2, "\(lines)")
        #expect(lines.first?.contains("outcome=unpinned") == true && lines.first?.contains("previous=none") == true)
        #expect(lines.last?.contains("outcome=pinned") == true && lines.last?.contains("previous=unpinned") == true)

        // A restart: the outcome is known and the next probe not due yet.
        let before = try Data(contentsOf: probe.world.state.appendingPathComponent("api.probes.json"))
        let socket = try NotifySocket()
        let restarted = try DaemonProcess(config: probe.world.config.path, environment: ["NOTIFY_SOCKET": socket.address])
        #expect(socket.collect(until: { $0.contains("READY=1") }, timeout: 15).last?.contains("READY=1") == true)
        usleep(1_000_000)
        restarted.signal(SIGTERM)
        #expect(restarted.waitForExit(timeout: 5) == 0)
        #expect(probeLines(restarted.stderr).isEmpty, "\(restarted.stderr)")
        #expect(try Data(contentsOf: probe.world.state.appendingPathComponent("api.probes.json")) == before)
    }

    @Test("a target that accepts and never answers: watchdog pings and updates go on; SIGTERM stops in under 2 s")
    func hungTarget() throws {
        let probe = try ProbeWorld("daemon-hung")
        let silent = try SilentListener()
        try probe.configure(probe.probeKeys(port: silent.port, timeout: "60s"))
        try probe.publish([probe.pin("leaf")])
        let socket = try NotifySocket()
        let daemon = try DaemonProcess(
            config: probe.world.config.path,
            environment: ["NOTIFY_SOCKET": socket.address, "WATCHDOG_USEC": "1000000"])
        #expect(socket.collect(until: { $0.contains("READY=1") }, timeout: 15).last?.contains("READY=1") == true)
        let during = socket.collect(until: { _ in false }, timeout: 3)
        #expect(during.filter { $0 == "WATCHDOG=1" }.count >= 4, "got \(during)")

        // An update pass runs and finishes (its fetch fails at once) while the probe still hangs.
        daemon.signal(SIGUSR1)
        let update = socket.collect(until: { $0.hasPrefix("STATUS=") }, timeout: 10)
        #expect(update.last?.hasPrefix("STATUS=1 store: 1 failing") == true, "got \(update)")

        let sent = Date()
        daemon.signal(SIGTERM)
        #expect(daemon.waitForExit(timeout: 5) == 0)
        #expect(Date().timeIntervalSince(sent) < 2)
        // A probe cut short by shutdown is no outcome: nothing logged, nothing recorded.
        #expect(probeLines(daemon.stderr).isEmpty, "\(daemon.stderr)")
        #expect(!FileManager.default.fileExists(atPath: probe.world.state.appendingPathComponent("api.probes.json").path))
        withExtendedLifetime(silent) {}
    }
}
