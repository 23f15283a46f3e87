"""Pins and Wultra fingerprint lists, type-checked as strictly as the Swift reader checks them."""

from __future__ import annotations

import binascii
import re
import string
from dataclasses import dataclass
from itertools import repeat
from typing import Any, Optional

from .strict_json import PinListError, Repeated

INT64_MIN, INT64_MAX = -(1 << 63), (1 << 63) - 1

_ASCII_LETTERS_FOLDED = str.maketrans(string.ascii_uppercase, string.ascii_lowercase)


def fold_name(name: str) -> str:
    """A name as every pinkeeper reader compares names (docs/protocol.md, "the host decides"): its Unicode scalars
    with A-Z folded to a-z and nothing else changed; two names are the same name when their folds
    are equal. Not str.lower(), upper() or casefold(): lower() and casefold() turn the Kelvin
    sign U+212A into "k", upper() makes the dotless "ı" an "I", and DNS folds ASCII letters only.
    No normalisation either: "é" and "e" + U+0301 stay two names, as in the Swift and Java readers."""
    # On ASCII text lower() changes A-Z only, and is many times faster than translate().
    return name.lower() if name.isascii() else name.translate(_ASCII_LETTERS_FOLDED)


@dataclass(frozen=True, init=False)
class Pin:
    """One pinned certificate: the raw SHA-256 of its DER bytes, trusted for `name` until
    `expires` (Unix seconds), at chain position `depth` (0 = leaf)."""

    name: str
    fingerprint: bytes
    expires: int
    depth: int = 0

    def __init__(self, name: str, fingerprint: bytes, expires: int, depth: int = 0):
        # What the generated __init__ of a frozen dataclass does through object.__setattr__,
        # at a third of its cost: a reload builds thousands of pins.
        fields = self.__dict__
        fields["name"], fields["fingerprint"], fields["expires"], fields["depth"] = name, fingerprint, expires, depth

    def is_expired(self, now: int) -> bool:
        """Wultra's rule: expired once `expires` lies strictly in the past."""
        return self.expires < now


@dataclass(frozen=True)
class DomainsConfig:
    """The 2026 `domainsConfig`: which names need pinning at all."""

    required_for_unlisted: bool
    domains: tuple  # ((name, required), ...) in document order

    def pinning_required(self, name: str) -> bool:
        """Whether a peer known by `name` must match a pin (names compared as `fold_name`). A
        peer has up to two names, and pinning is skipped only if it is required for neither."""
        folded = fold_name(name)
        # The first entry for a name wins, as in the Swift reader.
        for listed, required in self.domains:
            if fold_name(listed) == folded:
                return required
        return self.required_for_unlisted


@dataclass(frozen=True)
class PinList:
    pins: tuple
    domains_config: Optional[DomainsConfig]


def parse_pin_list(document: Any) -> PinList:
    """A parsed JSON document as a list. Every entry needs a string `name`, a standard-base64
    `fingerprint` of 32 bytes and an integer `expires`; `depth` is an optional integer >= 0;
    `signature` and `key` are optional strings (or null), not used here but checked as every
    reader checks them. A member given twice is refused; unknown members are ignored at every level."""
    root = _object(document, "the document")
    entries = member(root, "fingerprints", "fingerprints")
    if not isinstance(entries, list):
        raise PinListError("fingerprints is not an array")
    pins = _plain_pins(entries)
    if pins is None:
        pins = [_checked_pin(entry, f"fingerprints[{index}]") for index, entry in enumerate(entries)]
    return PinList(tuple(pins), _domains_config(optional_member(root, "domainsConfig", "the document")))


def _plain_pins(entries: list) -> Optional[list]:
    """Every entry's pin when all of them are plainly valid, which a good file's are: checked
    column by column, so that the interpreter does not step through thousands of entries one
    rule at a time. None when any entry is not (a member missing, repeated, of another type...):
    each is then checked on its own by `_checked_pin`, which says what is wrong."""
    if not _types(entries) <= {dict}:
        return None
    names, encoded, expires, depths, signatures, keys = (
        list(map(dict.get, entries, repeat(member))) for member in ("name", "fingerprint", "expires", "depth", "signature", "key"))
    if not (_types(names) <= {str} and _types(encoded) <= {str} and _types(expires) <= {int}
            and _types(depths) <= {int, type(None)} and _types(signatures) | _types(keys) <= {str, type(None)}):
        return None
    depths = [depth or 0 for depth in depths]
    if entries and not (INT64_MIN <= min(expires) and max(expires) <= INT64_MAX
                        and 0 <= min(depths) and max(depths) <= INT64_MAX):
        return None
    if not _all_digests(encoded):
        return None
    return list(map(Pin, names, map(binascii.a2b_base64, encoded), expires, depths))


def _all_digests(encoded: list) -> bool:
    """Whether `_DIGEST_BASE64` matches every string, checked on all of them joined instead of
    one regular expression call each: every string 44 characters long, so a "=" at each 44th
    place of the joined text and as many "=" in all is one "=" at the end of each and nowhere
    else; and nothing outside the base64 alphabet (ASCII first, so that encode() cannot fail)."""
    joined = "".join(encoded)
    return (set(map(len, encoded)) <= {44} and joined.isascii()
            and joined[43::44] == "=" * len(encoded) == "=" * joined.count("=")
            and not joined.encode().translate(None, _BASE64_ALPHABET))


_BASE64_ALPHABET = (string.ascii_letters + string.digits + "+/=").encode()


def _types(values: list) -> set:
    return set(map(type, values))


def _checked_pin(entry: Any, where: str) -> Pin:
    """One entry, each rule checked on its own so that a refusal names the field."""
    entry = _object(entry, where)
    name = _string(entry, "name", where)
    encoded = _string(entry, "fingerprint", where)
    expires = _integer(entry, "expires", where)
    depth = _integer(entry, "depth", where, optional=True)
    # Not used here, but known: each must be a string or null, and given once (as every reader checks).
    _optional_string(entry, "signature", where)
    _optional_string(entry, "key", where)
    digest = _digest(encoded)
    if digest is None:
        raise PinListError(f"{where}.fingerprint is not the base64 of a 32-byte SHA-256 digest")
    if depth is not None and depth < 0:
        raise PinListError(f"{where}.depth is negative")
    return Pin(name, digest, expires, depth or 0)


def _domains_config(value: Any) -> Optional[DomainsConfig]:
    if value is None:
        return None
    where = "domainsConfig"
    config = _object(value, where)
    unlisted = _boolean(config, "sslPinningRequiredForUnlisted", where)
    listed = member(config, "domains", where)
    if not isinstance(listed, list):
        raise PinListError(f"{where}.domains is not an array")
    domains = []
    for index, domain in enumerate(listed):
        at = f"{where}.domains[{index}]"
        domain = _object(domain, at)
        domains.append((_string(domain, "name", at), _boolean(domain, "sslPinningRequired", at)))
    _optional_string(config, "key", where)  # which key signed it: not used here, but known
    return DomainsConfig(unlisted, tuple(domains))


#: 43 characters and one "=" are 32 bytes (and 2 unused low bits, which may be anything).
_DIGEST_BASE64 = re.compile("[A-Za-z0-9+/]{43}=")


def _digest(text: str) -> Optional[bytes]:
    """Standard, padded base64 of exactly 32 bytes; anything else is not a fingerprint."""
    return binascii.a2b_base64(text) if _DIGEST_BASE64.fullmatch(text) else None


def _object(value: Any, where: str) -> dict:
    if not isinstance(value, dict):
        raise PinListError(f"{where} is not an object")
    return value


def _path(where: str, key: str) -> str:
    return key if where in (key, "the document") else f"{where}.{key}"


def optional_member(container: dict, key: str, where: str) -> Any:
    """The member named `key`; None when it is absent (or null); an error when it is repeated."""
    value = container.get(key)
    if isinstance(value, Repeated):
        raise PinListError(f"{_path(where, key)} appears more than once")
    return value


def member(container: dict, key: str, where: str) -> Any:
    if key not in container:
        raise PinListError(f"{_path(where, key)} is missing")
    return optional_member(container, key, where)


def _string(container: dict, key: str, where: str) -> str:
    value = member(container, key, where)
    if not isinstance(value, str):
        raise PinListError(f"{where}.{key} is not a string")
    return value


def _optional_string(container: dict, key: str, where: str) -> Optional[str]:
    value = optional_member(container, key, where)
    if value is not None and not isinstance(value, str):
        raise PinListError(f"{where}.{key} is not a string")
    return value


def _boolean(container: dict, key: str, where: str) -> bool:
    value = member(container, key, where)
    if not isinstance(value, bool):
        raise PinListError(f"{where}.{key} is not a boolean")
    return value


def _integer(container: dict, key: str, where: str, optional: bool = False) -> Optional[int]:
    if optional and optional_member(container, key, where) is None:
        return None
    value = member(container, key, where)
    # bool is an int subclass in Python; JSON true is not an integer.
    if isinstance(value, bool) or not isinstance(value, int) or not INT64_MIN <= value <= INT64_MAX:
        raise PinListError(f"{where}.{key} is not an integer")
    return value
