"""Pins and Wultra fingerprint lists, type-checked as strictly as the Swift reader checks them."""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass
from typing import Any, Optional

INT64_MIN, INT64_MAX = -(1 << 63), (1 << 63) - 1


@dataclass(frozen=True)
class Pin:
    """One pinned certificate: the raw SHA-256 of its DER bytes, trusted for `name` until
    `expires` (Unix seconds), at chain position `depth` (0 = leaf)."""

    name: str
    fingerprint: bytes
    expires: int
    depth: int = 0

    def is_expired(self, now: int) -> bool:
        """Wultra's rule: expired once `expires` lies strictly in the past."""
        return self.expires < now


@dataclass(frozen=True)
class DomainsConfig:
    """The 2026 `domainsConfig`: which common names need pinning at all."""

    required_for_unlisted: bool
    domains: tuple  # ((name, required), ...) in document order

    def pinning_required(self, name: str) -> bool:
        # The first entry for a name wins, as in the Swift reader.
        for listed, required in self.domains:
            if listed == name:
                return required
        return self.required_for_unlisted


@dataclass(frozen=True)
class PinList:
    pins: tuple
    domains_config: Optional[DomainsConfig]


class PinListError(ValueError):
    """Why a document is not a usable fingerprint list; the message names the field."""


def loads_json(data: bytes) -> Any:
    """Strict JSON: UTF-8, no NaN or Infinity (which Python's json would otherwise accept)."""
    def reject(constant: str) -> Any:
        raise PinListError(f"not valid JSON ({constant} is not a JSON number)")
    try:
        return json.loads(data.decode("utf-8"), parse_constant=reject)
    except UnicodeDecodeError:
        raise PinListError("not valid JSON (not UTF-8)") from None
    except json.JSONDecodeError:
        raise PinListError("not valid JSON") from None


def parse_pin_list(document: Any) -> PinList:
    """A parsed JSON document as a list. Every entry needs a string `name`, a standard-base64
    `fingerprint` of 32 bytes and an integer `expires`; `depth` is an optional integer >= 0.
    Unknown members are ignored at every level."""
    root = _object(document, "the document")
    entries = _member(root, "fingerprints", "fingerprints")
    if not isinstance(entries, list):
        raise PinListError("fingerprints is not an array")
    pins = []
    for index, entry in enumerate(entries):
        where = f"fingerprints[{index}]"
        entry = _object(entry, where)
        name = _string(entry, "name", where)
        encoded = _string(entry, "fingerprint", where)
        expires = _integer(entry, "expires", where)
        depth = _integer(entry, "depth", where, optional=True)
        if entry.get("signature") is not None:
            _string(entry, "signature", where)
        digest = _digest(encoded)
        if digest is None:
            raise PinListError(f"{where}.fingerprint is not the base64 of a 32-byte SHA-256 digest")
        if depth is not None and depth < 0:
            raise PinListError(f"{where}.depth is negative")
        pins.append(Pin(name, digest, expires, depth or 0))
    return PinList(tuple(pins), _domains_config(root.get("domainsConfig")))


def _domains_config(value: Any) -> Optional[DomainsConfig]:
    if value is None:
        return None
    where = "domainsConfig"
    config = _object(value, where)
    unlisted = _boolean(config, "sslPinningRequiredForUnlisted", where)
    listed = _member(config, "domains", where)
    if not isinstance(listed, list):
        raise PinListError(f"{where}.domains is not an array")
    domains = []
    for index, domain in enumerate(listed):
        at = f"{where}.domains[{index}]"
        domain = _object(domain, at)
        domains.append((_string(domain, "name", at), _boolean(domain, "sslPinningRequired", at)))
    return DomainsConfig(unlisted, tuple(domains))


def _digest(text: str) -> Optional[bytes]:
    """Standard, padded base64 of exactly 32 bytes; anything else is not a fingerprint."""
    if len(text) != 44:
        return None
    try:
        raw = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        return None
    return raw if len(raw) == 32 else None


def _object(value: Any, where: str) -> dict:
    if not isinstance(value, dict):
        raise PinListError(f"{where} is not an object")
    return value


def _member(container: dict, key: str, where: str) -> Any:
    if key not in container:
        raise PinListError(f"{where if where == key else where + '.' + key} is missing")
    return container[key]


def _string(container: dict, key: str, where: str) -> str:
    value = _member(container, key, where)
    if not isinstance(value, str):
        raise PinListError(f"{where}.{key} is not a string")
    return value


def _boolean(container: dict, key: str, where: str) -> bool:
    value = _member(container, key, where)
    if not isinstance(value, bool):
        raise PinListError(f"{where}.{key} is not a boolean")
    return value


def _integer(container: dict, key: str, where: str, optional: bool = False) -> Optional[int]:
    if optional and container.get(key) is None:
        return None
    value = _member(container, key, where)
    # bool is an int subclass in Python; JSON true is not an integer.
    if isinstance(value, bool) or not isinstance(value, int) or not INT64_MIN <= value <= INT64_MAX:
        raise PinListError(f"{where}.{key} is not an integer")
    return value
