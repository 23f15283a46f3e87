public import Glibc

/// The system calls publishing needs, behind a seam so tests can inject ENOSPC or EACCES
/// exactly where a real disk would fail. Each returns what the system call returns and
/// leaves `errno` set on failure.
public protocol FileSystem: Sendable {
    func openDirectory(_ path: String) -> Int32
    func createExclusive(_ directory: Int32, _ name: String, mode: mode_t) -> Int32
    func write(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> Int
    func fsync(_ fd: Int32) -> Int32
    func rename(_ directory: Int32, _ from: String, _ to: String) -> Int32
}

public struct PosixFileSystem: FileSystem {
    public init() {}
    public func openDirectory(_ path: String) -> Int32 { open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
    public func createExclusive(_ directory: Int32, _ name: String, mode: mode_t) -> Int32 {
        // O_EXCL|O_NOFOLLOW: never reuse or follow anything already planted at this name.
        openat(directory, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode)
    }
    public func write(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> Int { Glibc.write(fd, bytes.baseAddress, bytes.count) }
    public func fsync(_ fd: Int32) -> Int32 { Glibc.fsync(fd) }
    public func rename(_ directory: Int32, _ from: String, _ to: String) -> Int32 { renameat(directory, from, directory, to) }
}

/// A failed system call, with the path it concerned and the errno text.
public struct FileError: Error, CustomStringConvertible, Equatable {
    public var operation: String
    public var path: String
    public var code: Int32
    /// The rename had already put the new file in place when this failed (the directory fsync
    /// after it): the file was not left as it was; only whether it survives a power loss is in doubt.
    public var afterReplacing = false
    /// Said instead of the errno's text, for a refusal that no system call made.
    public var explanation: String?

    public init(_ operation: String, _ path: String, code: Int32 = errno, afterReplacing: Bool = false, explanation: String? = nil) {
        self.operation = operation
        self.path = path
        self.code = code
        self.afterReplacing = afterReplacing
        self.explanation = explanation
    }

    public var description: String { "\(operation) \(path): \(explanation ?? String(cString: strerror(code)))" }
}
