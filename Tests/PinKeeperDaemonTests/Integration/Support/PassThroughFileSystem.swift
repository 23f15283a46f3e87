import Glibc
@testable import PinKeeperDaemon

/// A test's file-system seam that acts as the real disk except for the methods it writes itself:
/// a stalled or held fsync, a counted rename.
protocol PassThroughFileSystem: FileSystem {}

extension PassThroughFileSystem {
    func openDirectory(_ path: String) -> Int32 { PosixFileSystem().openDirectory(path) }
    func createExclusive(_ directory: Int32, _ name: String, mode: mode_t) -> Int32 {
        PosixFileSystem().createExclusive(directory, name, mode: mode)
    }
    func write(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> Int { PosixFileSystem().write(fd, bytes) }
    func fsync(_ fd: Int32) -> Int32 { PosixFileSystem().fsync(fd) }
    func rename(_ directory: Int32, _ from: String, _ to: String) -> Int32 { PosixFileSystem().rename(directory, from, to) }
}
