"""The published cache file (docs/cache-format.md) and a reader that follows it."""

from __future__ import annotations

import hashlib
import json
import os
import threading
import time
from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence, Tuple

from . import validation
from .errors import CacheReaderError
from .files import file_identity, read_file
from .pins import (INT64_MAX, INT64_MIN, DomainsConfig, Pin, PinList, PinListError, fold_name, member, optional_member,
                   parse_pin_list)
from .strict_json import loads_json
from .validation import Verdict

FORMAT_VERSION = 1
#: The values of `pinkeeper.mode` this version reads (None: absent or null, honoured as challenge).
KNOWN_MODES = (None, "static", "challenge")
DEFAULT_CACHE_DIRECTORY = "/var/cache/pinkeeper"


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
        altered: they must not widen trust. A mode this reader does not know is never read."""
        return self.mode != "static"

    @property
    def usable_pins(self) -> Tuple[Pin, ...]:
        return self.pins if self.signs_whole_list else tuple(p for p in self.pins if p.depth == 0)

    @property
    def usable_domains_config(self) -> Optional[DomainsConfig]:
        return self.domains_config if self.signs_whole_list else None

    @classmethod
    def parse(cls, data: bytes) -> "CacheFile":
        """The file's content, checked; PinListError (with its `code`) when it cannot be used."""
        document = loads_json(data)
        listed = parse_pin_list(document)
        metadata = optional_member(document, "pinkeeper", "the document")
        if metadata is None:
            raise PinListError('the "pinkeeper" metadata object is missing: this is a Wultra list, not a cache file',
                               "missing-metadata")
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
            raise PinListError(f"pinkeeper.format is {fields['format']}, and this reader reads format {FORMAT_VERSION} "
                               "only (a newer pinkeeper wrote it: update the reader)", "unsupported-format")
        # Never read as static or challenge: a mode this version does not know may mean anything.
        if mode not in KNOWN_MODES:
            raise PinListError(f"pinkeeper.mode is {json.dumps(mode)}, which this reader does not know "
                               "(it reads \"static\" and \"challenge\": update the reader)", "unsupported-format")
        return cls(listed.pins, listed.domains_config, fields["store"], fields["source"],
                   fields["updated"], fields["nextUpdate"], mode)


def read_fallback(path: str) -> Tuple[Pin, ...]:
    """Pins of a Wultra fallback list (`{"fingerprints": [...]}`). Its `domainsConfig` is
    ignored, as the mobile clients ignore it in fallback data. Unlike the cache file it may be a
    symlink: it is configuration the operator placed, not a file in a directory a service writes.
    It must exist, and other users must not be able to write it (nor its directory)."""
    read = read_file(path, follow_symlink=True)
    if read is None:
        raise CacheReaderError("missing", path, "does not exist: create the fallback file, or remove the store's "
                               "fallback_file setting")
    try:
        return parse_pin_list(loads_json(read[0])).pins
    except PinListError as error:
        raise CacheReaderError(error.code, path, f"is not a Wultra fingerprint list ({error}): "
                               "correct the fallback file") from None


def now() -> int:
    return int(time.time())


class CacheReader:
    """Answers "may I trust this TLS peer?" for a long-running process from one store's cache
    file plus the store's fallback pins, with Wultra's semantics as docs/protocol.md decides
    them: by the host the client verified and the leaf's common name.

    Every question first lstats the file; it is read and parsed again only when its identity
    changed (`files.file_identity`: the daemon replaces it atomically, so each version has a new
    inode). A missing file means no cached pins. A symlink at the path is never followed, and a
    file that other users may write, or in a directory they may write without the sticky bit, is
    never read: each is refused like any other unusable version, with its error `code`. A version
    that cannot be used leaves the last good pins in use, and `problem` says why. Every question
    puts the host in its one form first (`validation.peer_names`). Safe to share between threads.
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
    # Each takes the two names of docs/protocol.md ("the host decides"). `host` (H) is the host the client connected
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
        """Reads the file again now, changed or not; raises if its current version cannot be used
        (its permissions, and those of its directory, are checked again too)."""
        with self._lock:
            self._identity = None
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
            identity: object = file_identity(os.lstat(self.path))
        except FileNotFoundError:
            identity = "missing"
        except OSError as error:
            identity = ("failed", error.errno)
        if identity == self._identity:
            return
        if identity == "missing":
            self._set(identity, None, None)
            return
        try:
            if isinstance(identity, tuple) and identity[0] == "failed":
                raise CacheReaderError("io-error", self.path, f"cannot be examined: {os.strerror(identity[1])}")
            read = read_file(self.path)
            if read is None:
                self._set("missing", None, None)
                return
            self._set(read[1], self._parse(read[0]), None)
        except CacheReaderError as error:
            # Keep answering from the last good version; remember this one so it is not re-read
            # on every question, and say why it was refused.
            self._identity = identity
            self.problem = error

    def _parse(self, data: bytes) -> CacheFile:
        try:
            cache = CacheFile.parse(data)
        except PinListError as error:
            raise CacheReaderError(error.code, self.path, f"cannot be used: {error}; the last good pins stay in use "
                                   f"until the daemon publishes a good version (pinkeeper update --store {self.store})"
                                   ) from None
        if cache.store != self.store:
            raise CacheReaderError("wrong-store", self.path, f"belongs to store '{cache.store}', not '{self.store}': "
                                   "check the store's cache_directory")
        return cache

    def _set(self, identity: object, cache: Optional[CacheFile], problem: Optional[CacheReaderError]) -> None:
        self._identity, self._cache, self.problem = identity, cache, problem
        self._by_name = self._index(cache)
