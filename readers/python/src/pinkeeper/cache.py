"""The published cache file (docs/cache-format.md) and a reader that follows it."""

from __future__ import annotations

import errno
import hashlib
import os
import stat
import threading
import time
from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence, Tuple

from . import validation
from .pins import (INT64_MAX, INT64_MIN, DomainsConfig, Pin, PinList, PinListError, fold_name, member, optional_member,
                   parse_pin_list)
from .strict_json import loads_json
from .validation import Verdict

FORMAT_VERSION = 1
DEFAULT_CACHE_DIRECTORY = "/var/cache/pinkeeper"
#: A cache file is a few hundred bytes per pin; anything this large is not one.
MAXIMUM_FILE_SIZE = 64 << 20


class CacheReaderError(Exception):
    """A cache or fallback file that cannot be used: kind "unreadable" (I/O, permissions) or
    "invalid" (its content), with the path and the reason."""

    def __init__(self, kind: str, path: str, reason: str):
        super().__init__(f"{path} {reason}")
        self.kind, self.path, self.reason = kind, path, reason


@dataclass(frozen=True)
class CacheFile:
    """One version of `<store>.json`: a Wultra list plus pinkeeper's metadata."""

    pins: Tuple[Pin, ...]
    domains_config: Optional[DomainsConfig]
    store: str
    source: str
    updated: int
    next_update: int
    mode: Optional[str] = None

    @property
    def signs_whole_list(self) -> bool:
        """Only a challenge-mode response is signed as a whole. In static mode only
        `name&fingerprint&expires` is signed, so `depth` and `domainsConfig` could have been
        altered: they must not widen trust. A mode this reader does not know is treated the same."""
        return self.mode in (None, "challenge")

    @property
    def usable_pins(self) -> Tuple[Pin, ...]:
        return self.pins if self.signs_whole_list else tuple(p for p in self.pins if p.depth == 0)

    @property
    def usable_domains_config(self) -> Optional[DomainsConfig]:
        return self.domains_config if self.signs_whole_list else None

    @classmethod
    def parse(cls, data: bytes) -> "CacheFile":
        document = loads_json(data)
        listed = parse_pin_list(document)
        metadata = optional_member(document, "pinkeeper", "the document")
        if metadata is None:
            raise PinListError('the "pinkeeper" metadata object is missing')
        if not isinstance(metadata, dict):
            raise PinListError("pinkeeper is not an object")
        fields = {}
        for key, kind in (("format", int), ("store", str), ("source", str), ("updated", int), ("nextUpdate", int)):
            value = member(metadata, key, "pinkeeper")
            if isinstance(value, bool) or not isinstance(value, kind) or (kind is int and not INT64_MIN <= value <= INT64_MAX):
                raise PinListError(f"pinkeeper.{key} is not {'a string' if kind is str else 'an integer'}")
            fields[key] = value
        mode = optional_member(metadata, "mode", "pinkeeper")
        if mode is not None and not isinstance(mode, str):
            raise PinListError("pinkeeper.mode is not a string")
        if fields["format"] != FORMAT_VERSION:
            raise PinListError(f"unsupported cache format {fields['format']}")
        return cls(listed.pins, listed.domains_config, fields["store"], fields["source"],
                   fields["updated"], fields["nextUpdate"], mode)


def read_fallback(path: str) -> Tuple[Pin, ...]:
    """Pins of a Wultra fallback list (`{"fingerprints": [...]}`). Its `domainsConfig` is
    ignored, as the mobile clients ignore it in fallback data. Unlike the cache file it may be a
    symlink: it is configuration the operator placed, not a file in a directory a service writes."""
    read = _read_file(path, follow_symlink=True)
    if read is None:
        raise CacheReaderError("unreadable", path, "does not exist")
    try:
        return parse_pin_list(loads_json(read[0])).pins
    except PinListError as error:
        raise CacheReaderError("invalid", path, f"is not a Wultra fingerprint list: {error}") from None


def now() -> int:
    return int(time.time())


class CacheReader:
    """Answers "may I trust this TLS peer?" for a long-running process from one store's cache
    file plus the store's fallback pins, with Wultra's semantics as PROTOCOL.md §5 and §5.1 decide
    them: by the host the client verified and the leaf's common name.

    Every question first lstats the file; it is read and parsed again only when its device,
    inode, size or modification time changed (the daemon replaces it atomically, so each version
    has a new inode). A missing file means no cached pins. A symlink at the path is never
    followed: it is refused like any other unusable version. A version that cannot be used leaves
    the last good pins in use, and `problem` says why. Safe to share between threads.
    """

    def __init__(self, store: str, cache_directory: str = DEFAULT_CACHE_DIRECTORY,
                 fallback_file: Optional[str] = None,
                 expected_common_names: Optional[Sequence[str]] = None,
                 path: Optional[str] = None):
        self.store = store
        self.path = path or os.path.join(cache_directory, f"{store}.json")
        self.expected_common_names = None if expected_common_names is None else tuple(expected_common_names)
        self._expected = (None if expected_common_names is None
                          else frozenset(fold_name(name) for name in self.expected_common_names))
        self.fallback_pins = read_fallback(fallback_file) if fallback_file else ()
        self._lock = threading.Lock()
        self._identity: object = None  # nothing looked at yet
        self._cache: Optional[CacheFile] = None
        self._by_name = self._index(None)
        self.problem: Optional[CacheReaderError] = None
        self._refresh_locked()
        if self.problem is not None:
            raise self.problem

    # Questions
    #
    # Each takes the two names of PROTOCOL.md §5.1. `host` (H) is the host the client connected
    # to and had the platform verify the certificate for (URL host, SNI, `server_hostname`); it
    # always takes part. `common_name` (N) is the leaf's most specific common name, when the leaf
    # is known; pins under it are compared too, but it never lifts a requirement H has. Names
    # compare as `pinkeeper.pins.fold_name` does: code points, ASCII letters ignoring case.

    def verdict(self, host: str, fingerprint: bytes, depth: int = 0, now: Optional[int] = None, *,
                common_name: Optional[str] = None) -> Verdict:
        """One certificate's raw SHA-256 digest, presented at `depth` (0 = leaf)."""
        return self._decide(host, common_name, now, validation.at_depth(bytes(fingerprint), depth))

    def verdict_for_certificate(self, host: str, der: bytes, now: Optional[int] = None, *,
                                common_name: Optional[str] = None) -> Verdict:
        """A leaf certificate as DER bytes. Its common name is not read from `der`: pass it as
        `common_name` (the TLS helpers and the command line do)."""
        return self.verdict(host, hashlib.sha256(der).digest(), 0, now, common_name=common_name)

    def verdict_for_verified_chain(self, host: str, chain: Sequence[bytes], now: Optional[int] = None, *,
                                   common_name: Optional[str] = None) -> Verdict:
        """The VERIFIED chain as DER certificates, leaf first (never the certificates a server
        merely presented: it may send any extra certificate it likes)."""
        return self.verdict_for_verified_digests(host, [hashlib.sha256(der).digest() for der in chain], now,
                                                 common_name=common_name)

    def verdict_for_verified_digests(self, host: str, digests: Sequence[bytes], now: Optional[int] = None, *,
                                     common_name: Optional[str] = None) -> Verdict:
        """SHA-256 digests of the verified chain's certificates, leaf first."""
        return self._decide(host, common_name, now, validation.in_verified_chain([bytes(d) for d in digests]))

    def admits(self, host: str, *, common_name: Optional[str] = None) -> bool:
        """Whether `expected_common_names` (if set) include the host or the common name; when
        they do not, every question answers UNTRUSTED."""
        return validation.admits(validation.peer_names(host, common_name), self._expected)

    # Inspection

    def refresh(self) -> None:
        """Looks at the file now; raises if its current version cannot be used."""
        with self._lock:
            self._refresh_locked()
            if self.problem is not None:
                raise self.problem

    @property
    def cache(self) -> Optional[CacheFile]:
        """The version answers come from (None while no good version exists)."""
        with self._lock:
            self._refresh_locked()
            return self._cache

    # State

    def _decide(self, host: str, common_name: Optional[str], at: Optional[int], matches) -> Verdict:
        names = validation.peer_names(host, common_name)
        with self._lock:
            self._refresh_locked()
            # The names are distinct once folded, so their pin lists never overlap.
            pins = [pin for name in names for pin in self._by_name.get(name, ())]
            domains = self._cache.usable_domains_config if self._cache else None
        return validation.decide(pins, names, now() if at is None else at, matches, self._expected, domains)

    def _index(self, cache: Optional[CacheFile]) -> Dict[str, List[Pin]]:
        """Pins by folded name, cached then fallback: a question looks up at most two keys."""
        by_name: Dict[str, List[Pin]] = {}
        for pin in (cache.usable_pins if cache else ()) + tuple(self.fallback_pins):
            by_name.setdefault(fold_name(pin.name), []).append(pin)
        return by_name

    def _refresh_locked(self) -> None:
        try:
            # The link itself, never what it points to: a symlink at the path is a version of its
            # own (refused when read), and a dangling one is not a missing file.
            info = os.lstat(self.path)
            identity: object = _identity(info)
        except FileNotFoundError:
            identity = "missing"
        except OSError as error:
            identity = ("failed", error.errno)
        if identity == self._identity:
            return
        if identity == "missing":
            self._set(identity, None, None)
            return
        if isinstance(identity, tuple) and identity[0] == "failed":
            self._identity = identity
            self.problem = CacheReaderError("unreadable", self.path, f"cannot be examined: {os.strerror(identity[1])}")
            return
        try:
            read = _read_file(self.path)
            if read is None:
                self._set("missing", None, None)
                return
            data, actual = read
            try:
                cache = CacheFile.parse(data)
            except PinListError as error:
                raise CacheReaderError("invalid", self.path, f"is not a pinkeeper cache file: {error}") from None
            if cache.store != self.store:
                raise CacheReaderError("invalid", self.path, f"belongs to store '{cache.store}', not '{self.store}'")
            self._set(actual, cache, None)
        except CacheReaderError as error:
            # Keep answering from the last good version; remember this one so it is not re-read
            # on every question, and say why it was refused.
            self._identity = identity
            self.problem = error

    def _set(self, identity: object, cache: Optional[CacheFile], problem: Optional[CacheReaderError]) -> None:
        self._identity, self._cache, self.problem = identity, cache, problem
        self._by_name = self._index(cache)


def _identity(info: os.stat_result) -> tuple:
    return (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns)


def _read_file(path: str, follow_symlink: bool = False) -> Optional[Tuple[bytes, tuple]]:
    """The whole file and the identity of what was read (from the open descriptor, so a
    replacement racing with the read is noticed at the next question). None when missing.
    Opened non-blocking: a FIFO planted at the path is refused, never waited on. A symlink is
    refused (O_NOFOLLOW) unless `follow_symlink`, which only the operator's fallback file gets:
    whoever can write the cache directory must not be able to point the reader elsewhere."""
    flags = os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK | (0 if follow_symlink else os.O_NOFOLLOW)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        return None
    except OSError as error:
        # O_NOFOLLOW fails with ELOOP on a symlink (EMLINK on FreeBSD); both can mean other things.
        if not follow_symlink and error.errno in (errno.ELOOP, errno.EMLINK) and _is_symlink(path):
            raise CacheReaderError("unreadable", path, "is a symlink, which is never followed") from None
        raise CacheReaderError("unreadable", path, f"cannot be opened: {os.strerror(error.errno or errno.EIO)}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise CacheReaderError("unreadable", path, "is not a regular file")
        if info.st_size > MAXIMUM_FILE_SIZE:
            raise CacheReaderError("invalid", path, f"is larger than {MAXIMUM_FILE_SIZE} bytes")
        chunks, total = [], 0
        while True:
            try:
                chunk = os.read(fd, 65536)
            except OSError as error:
                raise CacheReaderError("unreadable", path, f"cannot be read: {os.strerror(error.errno or errno.EIO)}") from None
            if not chunk:
                break
            total += len(chunk)
            if total > MAXIMUM_FILE_SIZE:
                raise CacheReaderError("invalid", path, f"is larger than {MAXIMUM_FILE_SIZE} bytes")
            chunks.append(chunk)
        return b"".join(chunks), _identity(info)
    finally:
        os.close(fd)


def _is_symlink(path: str) -> bool:
    try:
        return stat.S_ISLNK(os.lstat(path).st_mode)
    except OSError:
        return False
