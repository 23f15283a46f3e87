import Foundation
import PinKeeper
@testable import PinKeeperDaemon
import Testing

/// The scheduling loop in this process: triggers from a stream, a fetcher that holds a pass in flight.
@Suite("The daemon loop: reload and SIGUSR1 during a pass")
struct DaemonLoopTests {
    let server: FixtureServer
    let sandbox: Sandbox

    init() throws {
        server = try FixtureServer()
        sandbox = try Sandbox()
        for (route, byte) in [("a", 1), ("b", 2), ("c1", 3), ("c2", 4), ("a2", 5)] as [(String, UInt8)] {
            try server.route(route, Lists.route(entries: [Lists.entry("\(route).example.com", byte)]))
        }
    }

    private func start(_ stores: [StoreConfig], fetcher: GatedFetcher, concurrency: Int = 8) -> InProcessDaemon {
        let sandbox = self.sandbox
        return InProcessDaemon(sandbox.configuration(stores), concurrency: concurrency, logger: sandbox.log.logger) { _ in
            sandbox.updater(fetcher: fetcher)
        }
    }

    @Test(
        "a store whose URL a reload changes during a pass is fetched from the new URL as soon as the pass ends",
        .timeLimit(.minutes(2)))
    func reloadDuringPass() async throws {
        let fetcher = GatedFetcher(holding: [server.url("a")])
        let daemon = start([try sandbox.store("a", url: server.url("a"))], fetcher: fetcher)
        #expect(await eventually(timeout: 30) { fetcher.waitingCount == 1 }, "the first fetch never started")

        daemon.setConfiguration(sandbox.configuration([try sandbox.store("a", url: server.url("a2"))]))
        daemon.send(.reload)
        #expect(await eventually(timeout: 30) { sandbox.log.all.contains { $0.message == "configuration reloaded" } })
        fetcher.release()

        #expect(
            await eventually(timeout: 30) { fetcher.requested.contains(server.url("a2")) },
            "requested \(fetcher.requested)")
        #expect(await eventually(timeout: 30) { (try? sandbox.published("a").metadata.source) == server.url("a2") })
        await daemon.stop()
    }

    @Test(
        "a SIGHUP while start-up waits for a store is applied silently: no RELOADING=1, and one READY=1 once the first pass ends",
        .timeLimit(.minutes(2)))
    func reloadBeforeReady() async throws {
        let fetcher = GatedFetcher(holding: [server.url("a")])
        let a = try sandbox.store("a", url: server.url("a"))
        let daemon = start([a], fetcher: fetcher)
        #expect(await eventually(timeout: 30) { fetcher.waitingCount == 1 }, "the first fetch never started")

        daemon.setConfiguration(sandbox.configuration([a, try sandbox.store("b", url: server.url("b"))]))
        daemon.send(.reload)
        #expect(await eventually(timeout: 30) { sandbox.log.all.contains { $0.message == "configuration reloaded" } })
        #expect(!daemon.notifier.texts.contains { $0.hasPrefix("RELOADING=1") || $0 == "READY=1" }, "\(daemon.notifier.texts)")
        fetcher.release()

        #expect(await eventually(timeout: 30) { (try? sandbox.published("b")) != nil }, "requested \(fetcher.requested)")
        #expect(daemon.notifier.texts.filter { $0 == "READY=1" }.count == 1, "\(daemon.notifier.texts)")
        daemon.send(.reload)  // once ready, a reload is announced again
        #expect(await eventually(timeout: 30) { daemon.notifier.texts.filter { $0 == "READY=1" }.count == 2 })
        #expect(daemon.notifier.texts.contains { $0.hasPrefix("RELOADING=1") })
        await daemon.stop()
    }

    @Test(
        "a SIGHUP before READY=1 whose read ends after the start-up pass: one READY=1 in all, none for the silent reload",
        .timeLimit(.minutes(2)))
    func reloadReadOutlastsStartUp() async throws {
        let fetcher = GatedFetcher(holding: [server.url("a")])
        let a = try sandbox.store("a", url: server.url("a"))
        let daemon = start([a], fetcher: fetcher)
        #expect(await eventually(timeout: 30) { fetcher.waitingCount == 1 }, "the first fetch never started")

        daemon.holdReloads(true)
        daemon.send(.reload)
        #expect(await eventually(timeout: 30) { daemon.reloadReads == 1 }, "the reload never read")
        fetcher.release()
        #expect(await eventually(timeout: 30) { daemon.notifier.texts.contains("READY=1") }, "\(daemon.notifier.texts)")
        daemon.holdReloads(false)
        #expect(await eventually(timeout: 30) { sandbox.log.all.contains { $0.message == "configuration reloaded" } })
        try await Task.sleep(for: .milliseconds(200))
        #expect(daemon.notifier.texts.filter { $0 == "READY=1" }.count == 1, "\(daemon.notifier.texts)")
        #expect(!daemon.notifier.texts.contains { $0.hasPrefix("RELOADING=1") }, "\(daemon.notifier.texts)")
        await daemon.stop()
    }

    @Test(
        "a store whose url changed while the daemon was stopped is fetched from the new url at start; an unchanged one waits",
        .timeLimit(.minutes(2)))
    func urlChangedWhileStopped() async throws {
        let first = GatedFetcher(holding: [])
        var daemon = start([try sandbox.store("a", url: server.url("a")), try sandbox.store("b", url: server.url("b"))], fetcher: first)
        #expect(await eventually(timeout: 30) { (try? sandbox.published("b")) != nil && (try? sandbox.published("a")) != nil })
        await daemon.stop()

        let second = GatedFetcher(holding: [])
        daemon = start([try sandbox.store("a", url: server.url("a2")), try sandbox.store("b", url: server.url("b"))], fetcher: second)
        #expect(await eventually(timeout: 30) { (try? sandbox.published("a").metadata.source) == server.url("a2") })
        #expect(await eventually(timeout: 30) { daemon.notifier.texts.contains("READY=1") })
        #expect(second.requested == [server.url("a2")], "b's url did not change: it waits for its next update")
        await daemon.stop()
    }

    @Test(
        "authoritative turned on while the daemon was stopped: the store is updated at start, once",
        .timeLimit(.minutes(2)))
    func authoritativeTurnedOnWhileStopped() async throws {
        let plain = try sandbox.store("a", url: server.url("a"))
        let authoritative = try sandbox.store("a", url: server.url("a")) { $0.authoritative = true }
        var daemon = start([plain], fetcher: GatedFetcher(holding: []))
        #expect(await eventually(timeout: 30) { (try? sandbox.published("a")) != nil })
        await daemon.stop()

        for expectedFetches in [1, 0] {  // once after the change; the state then records it
            let fetcher = GatedFetcher(holding: [])
            daemon = start([authoritative], fetcher: fetcher)
            #expect(await eventually(timeout: 30) { daemon.notifier.texts.contains("READY=1") })
            let succeeded = { sandbox.log.all.filter { $0.message == "update succeeded" }.count }
            if expectedFetches > 0 { #expect(await eventually(timeout: 30) { succeeded() == 2 }) }  // the first run's, and this one
            #expect(await eventually(timeout: 30) { daemon.notifier.texts.contains { $0.hasPrefix("STATUS=") } })
            await daemon.stop()
            #expect(fetcher.requested.count == expectedFetches, "\(fetcher.requested)")
            // Found due at start in the first run only (a due store stopped before its fetch
            // would pass the count above; its due time is decided before READY=1).
            let madeDue = sandbox.log.all.filter { $0.message.hasPrefix("the store became authoritative") }
            #expect(madeDue.count == 1, "\(madeDue.map(\.message))")
        }
    }

    @Test(
        "SIGHUPs while a reload reads its files are coalesced: the newest configuration alone is applied, with one READY=1",
        .timeLimit(.minutes(2)))
    func reloadsCoalesce() async throws {
        let fetcher = GatedFetcher(holding: [])
        let a = try sandbox.store("a", url: server.url("a"))
        let daemon = start([a], fetcher: fetcher)
        #expect(await eventually(timeout: 30) { daemon.notifier.texts.contains("READY=1") })

        daemon.holdReloads(true)
        daemon.setConfiguration(sandbox.configuration([a, try sandbox.store("b", url: server.url("b"))]))
        daemon.send(.reload)
        #expect(await eventually(timeout: 30) { daemon.reloadReads == 1 }, "the first reload never read")
        daemon.setConfiguration(sandbox.configuration([a, try sandbox.store("c", url: server.url("c1"))]))
        daemon.send(.reload)
        #expect(
            await eventually(timeout: 30) { daemon.notifier.texts.filter { $0.hasPrefix("RELOADING=1") }.count == 2 },
            "the second SIGHUP was not answered while the first reload read: \(daemon.notifier.texts)")
        daemon.holdReloads(false)

        #expect(
            await eventually(timeout: 30) { (try? sandbox.published("c").metadata.source) == server.url("c1") },
            "requested \(fetcher.requested)")
        #expect(daemon.reloadReads == 2)
        #expect(!fetcher.requested.contains(server.url("b")), "the superseded configuration was applied")
        let sinceReload = daemon.notifier.texts.drop { !$0.hasPrefix("RELOADING=1") }
        #expect(sinceReload.filter { $0 == "READY=1" }.count == 1, "\(Array(sinceReload))")
        #expect(sandbox.log.all.filter { $0.message == "configuration reloaded" }.count == 1)
        await daemon.stop()
    }

    @Test("SIGUSR1 during a pass updates its stores again once the pass ends", .timeLimit(.minutes(2)))
    func updateAllDuringPass() async throws {
        let fetcher = GatedFetcher(holding: [server.url("a")])
        let daemon = start([try sandbox.store("a", url: server.url("a"))], fetcher: fetcher)
        #expect(await eventually(timeout: 30) { fetcher.waitingCount == 1 }, "the first fetch never started")

        daemon.send(.updateAll)
        #expect(await eventually(timeout: 30) { sandbox.log.all.contains { $0.message.hasPrefix("updating every store now") } })
        fetcher.release()

        #expect(await eventually(timeout: 30) { fetcher.requested.count == 2 }, "requested \(fetcher.requested)")
        await daemon.stop()
    }

    @Test(
        "a pass started before a reload neither fetches a store the reload removed nor one it changed, by their old configuration",
        .timeLimit(.minutes(2)))
    func reloadRemovesAndChangesStoresNotYetStarted() async throws {
        let fetcher = GatedFetcher(holding: [server.url("a")])
        let before = [
            try sandbox.store("a", url: server.url("a")), try sandbox.store("b", url: server.url("b")),
            try sandbox.store("c", url: server.url("c1")),
        ]
        // One store at a time, in id order: b and c wait behind the held a.
        let daemon = start(before, fetcher: fetcher, concurrency: 1)
        #expect(await eventually(timeout: 30) { fetcher.waitingCount == 1 }, "the first fetch never started")

        daemon.setConfiguration(sandbox.configuration([before[0], try sandbox.store("c", url: server.url("c2"))]))
        daemon.send(.reload)
        #expect(await eventually(timeout: 30) { sandbox.log.all.contains { $0.message == "configuration reloaded" } })
        fetcher.release()

        #expect(
            await eventually(timeout: 30) { (try? sandbox.published("c").metadata.source) == server.url("c2") },
            "requested \(fetcher.requested)")
        #expect(fetcher.requested == [server.url("a"), server.url("c2")])
        #expect(!FileManager.default.fileExists(atPath: sandbox.cacheFile("b").path))
        #expect(
            await eventually(timeout: 30) {
                daemon.notifier.texts.last { $0.hasPrefix("STATUS=") }?.hasPrefix("STATUS=2 stores: 2 fresh") == true
            },
            "\(daemon.notifier.texts)")
        await daemon.stop()
    }

    @Test("the metrics file follows the passes", .timeLimit(.minutes(2)))
    func metricsFileAfterPass() async throws {
        let fetcher = GatedFetcher(holding: [])
        let file = sandbox.root.appendingPathComponent("pinkeeper.prom")
        let sandbox = self.sandbox
        let daemon = InProcessDaemon(
            sandbox.configuration([try sandbox.store("a", url: server.url("a"))], metricsFile: file.path),
            logger: sandbox.log.logger
        ) { _ in sandbox.updater(fetcher: fetcher) }
        #expect(
            await eventually(timeout: 30) {
                (try? String(contentsOf: file, encoding: .utf8))?.contains("{store=\"a\",result=\"ok\"} 1") == true
            })
        await daemon.stop()
    }
}
