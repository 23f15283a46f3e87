"""Pins and Wultra fingerprint lists, type-checked as strictly as the Swift reader checks them."""

from __future__ import annotations

import binascii
import json
import re
import string
from dataclasses import dataclass
from itertools import chain, repeat
from typing import Any, Optional

INT64_MIN, INT64_MAX = -(1 << 63), (1 << 63) - 1

_ASCII_LETTERS_FOLDED = str.maketrans(string.ascii_uppercase, string.ascii_lowercase)


def fold_name(name: str) -> str:
    """A name as every pinkeeper reader compares names (PROTOCOL.md §5.1): its Unicode scalars
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


class PinListError(ValueError):
    """Why a document is not a usable fingerprint list; the message names the field."""


#: The deepest nesting accepted, the document's own object counting as 1 (as the Swift reader).
MAXIMUM_DEPTH = 512


class Repeated:
    """Stands, in a parsed object, for a member given more than once. Readers disagree on which
    occurrence counts (Python's json takes the last, others the first), so a member this reader
    uses must appear once; a repeated member it does not know is skipped, as the Swift reader
    does. Every occurrence's value is kept so that all of them are checked."""

    __slots__ = ("values",)

    def __init__(self, values: list):
        self.values = values


def _object_from_pairs(pairs: list) -> dict:
    result = dict(pairs)
    if len(result) == len(pairs):
        return result  # the common case, no member repeated
    result = {}
    for key, value in pairs:
        if key not in result:
            result[key] = value
        elif isinstance(result[key], Repeated):
            result[key].values.append(value)
        else:
            result[key] = Repeated([result[key], value])
    return result


class _OutOfRange:
    """An integer literal too long for 64 bits: never an integer here, and never handed to
    int(), which refuses literals of more than 4300 digits with a ValueError."""


def _integer_literal(text: str) -> Any:
    # 20 characters hold every signed 64-bit integer ("-9223372036854775808").
    return int(text) if len(text) <= 20 else _OutOfRange()


def _reject_constant(constant: str) -> Any:
    raise PinListError(f"not valid JSON ({constant} is not a JSON number)")


def loads_json(data: bytes) -> Any:
    """Strict JSON (RFC 8259), as the Swift reader reads it: UTF-8 without a byte order mark, no
    NaN or Infinity, no lone surrogate escape, nothing after the document, at most
    MAXIMUM_DEPTH levels; a member given twice becomes a `Repeated`. Python's json alone would
    accept the constants and lone surrogates, and keep only a repeated member's last value."""
    if data.startswith(b"\xef\xbb\xbf"):
        raise PinListError("not valid JSON (starts with a UTF-8 byte order mark)")
    try:
        text = data.decode("utf-8")  # strict: no invalid, overlong or surrogate sequences
    except UnicodeDecodeError:
        raise PinListError("not valid JSON (invalid UTF-8)") from None
    try:
        document = json.loads(text, object_pairs_hook=_object_from_pairs, parse_constant=_reject_constant,
                              parse_int=_integer_literal)
    except RecursionError:
        raise PinListError(f"not valid JSON (nested deeper than {MAXIMUM_DEPTH} levels)") from None
    except json.JSONDecodeError as error:
        raise PinListError(f"not valid JSON ({error.msg} at character {error.pos})") from None
    _check_depth(document)
    # The text is strict UTF-8, so a surrogate in a parsed string can only come from an escape
    # \uD800-\uDFFF: without one in the text (the common case) there is nothing to look for.
    if _SURROGATE_ESCAPE.search(text):
        _check_surrogates(document)
    return document


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_SURROGATE = re.compile("[\ud800-\udfff]")


def _check_depth(document: Any) -> None:
    """Level by level: the interpreter visits each container once and its members in bulk,
    which for thousands of small objects costs a fraction of a walk value by value."""
    values, depth = [document], 0
    while True:
        containers = [value for value in values if type(value) is dict or type(value) is list]
        if not containers:
            return
        depth += 1
        if depth > MAXIMUM_DEPTH:
            raise PinListError(f"not valid JSON (nested deeper than {MAXIMUM_DEPTH} levels)")
        values = list(chain.from_iterable(c.values() if type(c) is dict else c for c in containers))
        repeated = [value.values for value in values if type(value) is Repeated]
        values.extend(chain.from_iterable(repeated))


def _check_surrogates(document: Any) -> None:
    """Every string, member names included, every value of a repeated member too."""
    pending = [document]
    while pending:
        value = pending.pop()
        if isinstance(value, str):
            if _SURROGATE.search(value):
                raise PinListError("not valid JSON (a lone surrogate escape)")
        elif isinstance(value, Repeated):
            pending.extend(value.values)
        elif isinstance(value, dict):
            pending.extend(value)
            pending.extend(value.values())
        elif isinstance(value, list):
            pending.extend(value)


def parse_pin_list(document: Any) -> PinList:
    """A parsed JSON document as a list. Every entry needs a string `name`, a standard-base64
    `fingerprint` of 32 bytes and an integer `expires`; `depth` is an optional integer >= 0.
    Unknown members are ignored at every level."""
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
    names, encoded, expires, depths, signatures = (list(map(dict.get, entries, repeat(key)))
                                                   for key in ("name", "fingerprint", "expires", "depth", "signature"))
    if not (_types(names) <= {str} and _types(encoded) <= {str} and _types(expires) <= {int}
            and _types(depths) <= {int, type(None)} and _types(signatures) <= {str, type(None)}):
        return None
    depths = [depth or 0 for depth in depths]
    if entries and not (INT64_MIN <= min(expires) and max(expires) <= INT64_MAX
                        and 0 <= min(depths) and max(depths) <= INT64_MAX):
        return None
    if not all(map(_DIGEST_BASE64.fullmatch, encoded)):
        return None
    return list(map(Pin, names, map(binascii.a2b_base64, encoded), expires, depths))


def _types(values: list) -> set:
    return set(map(type, values))


def _checked_pin(entry: Any, where: str) -> Pin:
    """One entry, each rule checked on its own so that a refusal names the field."""
    entry = _object(entry, where)
    name = _string(entry, "name", where)
    encoded = _string(entry, "fingerprint", where)
    expires = _integer(entry, "expires", where)
    depth = _integer(entry, "depth", where, optional=True)
    if optional_member(entry, "signature", where) is not None:
        _string(entry, "signature", where)
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
