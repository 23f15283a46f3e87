/// Why a cache or fallback file could not be used: a `code` for programs to act on, the coarser
/// `kind` (`unreadable`: I/O, permissions, what sits at the path; `invalid`: its content), and
/// the path and the reason in one line for people. The code stays the same from one version to
/// the next; the reason's words may not.
public struct CacheReaderError: Error, Equatable, Sendable, CustomStringConvertible {
    public enum Kind: Sendable, Equatable {
        case unreadable
        case invalid
    }

    public enum Code: Sendable, Hashable {
        /// The fallback file does not exist. (A missing cache file is not an error: the daemon
        /// may not have published yet.)
        case missing
        /// The cache file is a symbolic link, which is never followed.
        case symlink
        /// Not a regular file: a directory, FIFO, socket or device.
        case notRegularFile
        /// Larger than any cache file can be (64 MiB).
        case tooLarge
        /// `open`, `fstat`, `stat` or `read` failed with this `errno` (`EACCES`: permissions).
        case ioError(errno: Int32)
        /// Not JSON (`PinListError.Code.notJSON`).
        case notJSON
        /// JSON, but not a valid fingerprint list (`PinListError.Code.invalidContent`).
        case invalidContent
        /// A list without pinkeeper's metadata: not a cache file.
        case missingMetadata
        /// A cache file of a format this version does not read (a newer pinkeeper wrote it).
        case unsupportedFormat
        /// A cache file of another store than the one the reader was opened for.
        case wrongStore
        /// A cache or fallback file other users may write, or one in a directory they may write
        /// without the sticky bit: a local user could plant pins there.
        case insecurePermissions

        /// The kind each code has always been reported as.
        public var kind: Kind {
            switch self {
            case .missing, .symlink, .notRegularFile, .ioError, .insecurePermissions: .unreadable
            case .tooLarge, .notJSON, .invalidContent, .missingMetadata, .unsupportedFormat, .wrongStore: .invalid
            }
        }

        /// The code as every reader and `pinkeeper validate` name it (Tests/Conformance/cases.json,
        /// `error_codes`): the word a program matches, the same in every language.
        public var name: String {
            switch self {
            case .missing: "missing"
            case .symlink: "symlink"
            case .notRegularFile: "not-regular-file"
            case .tooLarge: "too-large"
            case .ioError: "io-error"
            case .notJSON: "not-json"
            case .invalidContent: "invalid-content"
            case .missingMetadata: "missing-metadata"
            case .unsupportedFormat: "unsupported-format"
            case .wrongStore: "wrong-store"
            case .insecurePermissions: "insecure-permissions"
            }
        }

        /// The code of a file whose content `PinList` or `CacheFile` refused.
        init(_ code: PinListError.Code) {
            switch code {
            case .notJSON: self = .notJSON
            case .invalidContent: self = .invalidContent
            case .missingMetadata: self = .missingMetadata
            case .unsupportedFormat: self = .unsupportedFormat
            }
        }
    }

    public var code: Code
    public var kind: Kind
    public var path: String
    public var reason: String

    public init(_ code: Code, _ path: String, _ reason: String) {
        self.code = code
        self.kind = code.kind
        self.path = path
        self.reason = reason
    }

    public var description: String { "\(path) \(reason)" }
}
