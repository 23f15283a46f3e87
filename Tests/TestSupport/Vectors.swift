package import Foundation
package import PinKeeper

/// The test vectors in `Tests/Fixtures/vectors` (see its README).
package enum Vectors {
    package static var root: URL { TestEnvironment.fixtures.appendingPathComponent("vectors") }

    package static func data(_ path: String) throws -> Data {
        try Data(contentsOf: root.appendingPathComponent(path))
    }

    /// A text file's content without surrounding whitespace or a trailing newline.
    package static func text(_ path: String) throws -> String {
        String(decoding: try data(path), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    package static func decode<T: Decodable>(_ type: T.Type, _ path: String) throws -> T {
        try JSONDecoder().decode(type, from: data(path))
    }

    package static func list(_ path: String) throws -> PinList {
        try PinList(json: data(path))
    }
}
