import FoundationEssentials
import Synchronization

/// The hidden names of one directory (temp files are `.<name>.tmp-…`), listed once and shared
/// by the stores of a pass: listing the cache directory for each store read N² names over a pass
/// of N stores (a million at 1,000), each listing waiting for the directory's lock behind other
/// stores' renames. A temp file that appears after the listing was made by a writer alive then;
/// if that writer has died, the next pass's listing finds its file.
public final class TempListing: Sendable {
    public let directory: String
    private let names = Mutex<[String]?>(nil)

    public init(directory: String) { self.directory = directory }

    /// Listed on first use (on the caller's thread: file work runs on threads of its own).
    var hiddenNames: [String] {
        names.withLock { names in
            if let names { return names }
            let listed = ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).filter { $0.hasPrefix(".") }
            names = listed
            return listed
        }
    }
}
