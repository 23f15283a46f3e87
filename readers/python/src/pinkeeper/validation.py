"""Wultra's answer to "may I trust this TLS peer?" (PROTOCOL.md §5), as the Swift `PinValidator`."""

from __future__ import annotations

import enum
from typing import Callable, Iterable, Optional, Sequence

from .pins import DomainsConfig, Pin


class Verdict(enum.Enum):
    """Callers must reject the handshake on both UNTRUSTED and EMPTY."""

    TRUSTED = "trusted"
    UNTRUSTED = "untrusted"
    #: No live pin exists for the name: reject, and the store needs an update.
    EMPTY = "empty"

    def __str__(self) -> str:
        return self.value


def decide(pins: Iterable[Pin], name: str, now: int, matches: Callable[[Pin], Optional[bool]],
           expected_common_names: Optional[Sequence[str]] = None,
           domains_config: Optional[DomainsConfig] = None) -> Verdict:
    """`pins` are the store's pins for `name` (cached then fallback); `matches` returns None when
    a pin does not apply to what was presented (another depth), else whether it matched."""
    # The operator's expected names first: nothing the server sends widens them.
    if expected_common_names is not None and name not in expected_common_names:
        return Verdict.UNTRUSTED
    if domains_config is not None and not domains_config.pinning_required(name):
        return Verdict.TRUSTED
    attempts = 0
    for pin in pins:
        if pin.name != name or pin.is_expired(now):
            continue
        matched = matches(pin)
        if matched:
            return Verdict.TRUSTED
        if matched is not None:
            attempts += 1
    # No pins at all, no live pin for the name, or none at the asked depth: all `empty`.
    return Verdict.UNTRUSTED if attempts else Verdict.EMPTY


def at_depth(fingerprint: bytes, depth: int) -> Callable[[Pin], Optional[bool]]:
    """One certificate digest presented at `depth`: only pins of that depth apply."""
    return lambda pin: pin.fingerprint == fingerprint if pin.depth == depth else None


def in_verified_chain(digests: Sequence[bytes]) -> Callable[[Pin], Optional[bool]]:
    """Digests of the verified chain, leaf first: each pin is compared with the certificate at
    its depth; pins deeper than the chain are skipped."""
    return lambda pin: digests[pin.depth] == pin.fingerprint if pin.depth < len(digests) else None
