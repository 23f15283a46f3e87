import Foundation
import Glibc
import Testing

extension Sandbox {
    /// Rewrites a store's published file as pinkeeper wrote it before it recorded the list mode
    /// and each pin's key (no `pinkeeper.mode`, no `key`), not yet due for an update; `change`
    /// may then edit the JSON object further (add `domainsConfig`, a `depth`, more pins, …).
    func rewriteAsOlderVersion(_ store: String, change: (inout [String: Any]) -> Void = { _ in }) throws {
        let bytes = try #require(cacheBytes(store))
        var object = try #require(try JSONSerialization.jsonObject(with: bytes) as? [String: Any])
        var entries = try #require(object["fingerprints"] as? [[String: Any]])
        for index in entries.indices { entries[index]["key"] = nil }
        object["fingerprints"] = entries
        var metadata = try #require(object["pinkeeper"] as? [String: Any])
        metadata["mode"] = nil
        metadata["nextUpdate"] = Int(Date().timeIntervalSince1970) + 86_400
        object["pinkeeper"] = metadata
        change(&object)
        let temp = cache.appendingPathComponent(".\(store).older.tmp")
        try JSONSerialization.data(withJSONObject: object).write(to: temp)
        _ = Glibc.rename(temp.path, cacheFile(store).path)
    }
}
