import FoundationEssentials
import Glibc
import Logging
import PinKeeper
@testable import PinKeeperDaemon
import TestSupport
import Testing

/// What a store's Envoy SDS files say: the live leaf pins of each name, and a hash no certificate
/// has wherever Envoy's leaf-only, expiry-blind check would trust more than a reader.
@Suite("Envoy secrets")
struct EnvoySecretsTests {
    let now: Int64 = 1_700_000_000

    func pin(_ name: String, _ byte: UInt8, expires: Int64? = nil, depth: Int = 0) -> Pin {
        Pin(name: name, fingerprint: [UInt8](repeating: byte, count: 32), expires: expires ?? now + 86_400, depth: depth)
    }

    func store(expected: [String]? = nil) throws -> StoreConfig {
        StoreConfig(id: "banking", url: "https://pins.example/list", publicKeys: [try Vectors.keyA()], expectedCommonNames: expected)
    }

    func cache(_ pins: [Pin], domains: DomainsConfig? = nil) -> CacheFile {
        CacheFile(
            list: PinList(pins: pins, domainsConfig: domains),
            metadata: .init(store: "banking", source: "https://pins.example/list", updated: now, nextUpdate: now + 3_600))
    }

    func hashes(_ text: String?) -> [String] {
        (text ?? "").split(separator: "\n").filter { $0.hasPrefix("    - \"") }.map { String($0.dropFirst(7).dropLast()) }
    }

    @Test("each name lists the hex SHA-256 of its live leaf pins, fallback pins included")
    func liveLeafPins() throws {
        let secrets = EnvoySecrets(
            store: try store(), cache: cache([pin("api.example.com", 0xAB), pin("api.example.com", 1, expires: now - 1)]),
            fallbackPins: [pin("api.example.com", 0x0C)], now: now)
        let text = try #require(secrets.files["api.example.com.yaml"])
        #expect(hashes(text) == [String(repeating: "ab", count: 32), String(repeating: "0c", count: 32)])
        #expect(text.contains("name: \"api.example.com\""))
        #expect(text.contains("\"@type\": type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.Secret"))
        #expect(secrets.warnings.isEmpty)
        #expect(secrets.nextChange == now + 86_401)  // the second after the earliest live expiry
    }

    @Test("a name without a live leaf pin gets a hash that matches nothing, never an empty list")
    func emptyFailsClosed() throws {
        let expired = EnvoySecrets(
            store: try store(), cache: cache([pin("old.example.com", 1, expires: now - 10)]), fallbackPins: [], now: now)
        #expect(hashes(expired.files["old.example.com.yaml"]) == [EnvoySecrets.neverMatches])
        let depthOnly = EnvoySecrets(store: try store(), cache: cache([pin("ca.example.com", 2, depth: 1)]), fallbackPins: [], now: now)
        #expect(hashes(depthOnly.files["ca.example.com.yaml"]) == [EnvoySecrets.neverMatches])
        #expect(depthOnly.warnings["ca.example.com.yaml"]?.contains("depth") == true)
    }

    @Test("domainsConfig exemptions and names outside expected_common_names fail closed")
    func inexpressibleRulesFailClosed() throws {
        let domains = DomainsConfig(
            sslPinningRequiredForUnlisted: false, domains: [.init(name: "api.example.com", sslPinningRequired: true)])
        let pins = [pin("api.example.com", 3), pin("free.example.com", 4)]
        let secrets = EnvoySecrets(store: try store(), cache: cache(pins, domains: domains), fallbackPins: [], now: now)
        #expect(hashes(secrets.files["api.example.com.yaml"]) == [String(repeating: "03", count: 32)])
        #expect(hashes(secrets.files["free.example.com.yaml"]) == [EnvoySecrets.neverMatches])
        #expect(secrets.warnings["free.example.com.yaml"]?.contains("domainsConfig") == true)
        let expected = EnvoySecrets(store: try store(expected: ["api.example.com"]), cache: cache(pins), fallbackPins: [], now: now)
        #expect(hashes(expected.files["free.example.com.yaml"]) == [EnvoySecrets.neverMatches])
        #expect(hashes(expected.files["api.example.com.yaml"]) == [String(repeating: "03", count: 32)])
    }

    @Test("a name that is not a DNS name or IP literal never becomes a path")
    func hostileNamesAreSkipped() throws {
        let names = ["../x", "a/b", "*.example.com", "x\u{0}y", ".hidden", "a..b", "-a.example", "", "b\u{FC}cher.example"]
        let secrets = EnvoySecrets(
            store: try store(), cache: cache(names.enumerated().map { pin($1, UInt8($0)) }), fallbackPins: [], now: now)
        #expect(secrets.files.isEmpty)
        #expect(Set(secrets.skipped) == Set(names))
        for good in ["api.example.com", "127.0.0.1", "::1", "2001:db8::1", "xn--bcher-kva.example", "_dmarc.example"] {
            #expect(EnvoySecretName.isPathSafe(good), "\(good)")
        }
    }

    @Test("the writer replaces only changed files and makes a departed name match nothing")
    func writerKeepsDepartedNamesClosed() throws {
        let root = TestEnvironment.temporaryDirectory("envoy-secrets").path
        defer { try? FileManager.default.removeItem(atPath: root) }
        let writer = EnvoySecretWriter(directory: root, logger: Logger(label: "test"))
        let first = EnvoySecrets(store: try store(), cache: cache([pin("a.example", 1), pin("b.example", 2)]), fallbackPins: [], now: now)
        #expect(writer.write(first, store: "banking") == 2)
        #expect(writer.write(first, store: "banking") == 0)  // unchanged: Envoy sees no rename
        let second = EnvoySecrets(store: try store(), cache: cache([pin("a.example", 1)]), fallbackPins: [], now: now)
        #expect(writer.write(second, store: "banking") == 1)
        let departed = try String(contentsOfFile: root + "/banking/b.example.yaml", encoding: .utf8)
        #expect(hashes(departed) == [EnvoySecrets.neverMatches])
        writer.retire(store: "banking")
        let retired = try String(contentsOfFile: root + "/banking/a.example.yaml", encoding: .utf8)
        #expect(hashes(retired) == [EnvoySecrets.neverMatches])
        var info = stat()
        #expect(stat(root + "/banking/a.example.yaml", &info) == 0 && info.st_mode & 0o777 == 0o644)
    }

    @Test("envoy_sds_directory is an absolute path of its own, apart from the cache and state directories")
    func configurationKey() throws {
        let root = TestEnvironment.temporaryDirectory("envoy-config").path
        defer { try? FileManager.default.removeItem(atPath: root) }
        func load(_ line: String) -> Result<Configuration, ConfigError> {
            let text = "cache_directory = \"\(root)/cache\"\nstate_directory = \"\(root)/state\"\n\(line)\n"
            _ = FileManager.default.createFile(atPath: root + "/p.toml", contents: Data(text.utf8))
            return Result { () throws(ConfigError) in try ConfigLoader.load(path: root + "/p.toml", environment: [:]) }
        }
        #expect(try load("envoy_sds_directory = \"\(root)/sds\"").get().envoySDSDirectory == root + "/sds")
        #expect(try load("").get().envoySDSDirectory == nil)
        for bad in ["sds", "\(root)/cache", "\(root)/cache/envoy", "\(root)"] {
            guard case .failure(let error) = load("envoy_sds_directory = \"\(bad)\"") else {
                Issue.record("'\(bad)' was accepted")
                continue
            }
            #expect("\(error)".contains("envoy_sds_directory"))
        }
    }
}
