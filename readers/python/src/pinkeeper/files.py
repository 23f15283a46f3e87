"""Reading a cache or fallback file: what may sit at its path, who may write it, how large it may be."""

from __future__ import annotations

import errno
import os
import stat
from typing import Optional, Tuple

from .errors import CacheReaderError

#: A cache file is a few hundred bytes per pin; anything this large is not one.
MAXIMUM_FILE_SIZE = 64 << 20


def file_identity(info: os.stat_result) -> tuple:
    """What tells one version of a file from another: the daemon renames each new version into
    place (a new inode); the change time also moves when the file is written in place or its mode
    changes, so a file made writable by others is looked at again."""
    return (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_mode)


def read_file(path: str, follow_symlink: bool = False) -> Optional[Tuple[bytes, tuple]]:
    """The whole file and the identity of what was read (from the open descriptor, so a
    replacement racing with the read is noticed at the next question). None when missing.
    Opened non-blocking: a FIFO planted at the path is refused, never waited on. A symlink is
    refused (O_NOFOLLOW) unless `follow_symlink`, which only the operator's fallback file gets:
    whoever can write the cache directory must not be able to point the reader elsewhere.
    Refused too when other users may write the file or its directory (`check_permissions`)."""
    flags = os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK | (0 if follow_symlink else os.O_NOFOLLOW)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        return None
    except OSError as error:
        raise _open_failure(path, error, follow_symlink) from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise CacheReaderError("not-regular-file", path, "is not a regular file: remove what sits there, "
                                   "the daemon publishes a regular file in its place")
        check_permissions(path, info, follow_symlink)
        if info.st_size > MAXIMUM_FILE_SIZE:
            raise _too_large(path)
        return _read_all(fd, path), file_identity(info)
    finally:
        os.close(fd)


def _read_all(fd: int, path: str) -> bytes:
    chunks, total = [], 0
    while True:
        try:
            chunk = os.read(fd, 65536)
        except OSError as error:
            raise CacheReaderError("io-error", path, f"cannot be read: {os.strerror(error.errno or errno.EIO)}") from None
        if not chunk:
            return b"".join(chunks)
        total += len(chunk)
        if total > MAXIMUM_FILE_SIZE:
            raise _too_large(path)
        chunks.append(chunk)


def _too_large(path: str) -> CacheReaderError:
    return CacheReaderError("too-large", path, f"is larger than {MAXIMUM_FILE_SIZE} bytes, more than any cache "
                            "file holds: it is not one")


def _open_failure(path: str, error: OSError, follow_symlink: bool) -> CacheReaderError:
    try:
        kind = stat.S_IFMT(os.lstat(path).st_mode)
    except OSError:
        kind = None
    # O_NOFOLLOW fails with ELOOP on a symlink (EMLINK on FreeBSD); both can mean other things.
    if not follow_symlink and error.errno in (errno.ELOOP, errno.EMLINK) and kind == stat.S_IFLNK:
        return CacheReaderError("symlink", path, "is a symlink, which is never followed: remove it, the daemon "
                                "publishes a regular file there")
    # A socket cannot be opened at all (ENXIO): what sits there is still not a file.
    if kind is not None and kind not in (stat.S_IFREG, stat.S_IFLNK):
        return CacheReaderError("not-regular-file", path, "is not a regular file: remove what sits there, "
                                "the daemon publishes a regular file in its place")
    return CacheReaderError("io-error", path, f"cannot be opened: {os.strerror(error.errno or errno.EIO)}")


def check_permissions(path: str, info: os.stat_result, follow_symlink: bool) -> None:
    """Refuses a file that other users may write, or one in a directory that other users may
    write without the sticky bit (they could put another file in its place): a local user must
    not be able to plant pins. The group is the service's and may write. A fallback file that is
    a symlink is checked where it points as well as where its link is."""
    if info.st_mode & stat.S_IWOTH:
        raise CacheReaderError("insecure-permissions", path, f"is writable by other users (mode "
                               f"{stat.S_IMODE(info.st_mode):04o}), who could plant pins in it: refused until they "
                               "cannot write it (chmod o-w)")
    directories = {os.path.dirname(path) or "."}
    if follow_symlink:
        directories.add(os.path.dirname(os.path.realpath(path)))
    for directory in sorted(directories):
        try:
            mode = os.stat(directory).st_mode
        except OSError as error:
            raise CacheReaderError("io-error", path, f"is in {directory}, which cannot be examined: "
                                   f"{os.strerror(error.errno or errno.EIO)}") from None
        if mode & stat.S_IWOTH and not mode & stat.S_ISVTX:
            raise CacheReaderError("insecure-permissions", path, f"is in {directory}, which other users may write "
                                   f"(mode {stat.S_IMODE(mode):04o}, no sticky bit) and so replace the file: refused "
                                   "until they cannot (chmod o-w, or chmod +t)")
