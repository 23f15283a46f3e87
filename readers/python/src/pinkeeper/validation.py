"""The answer to "may I trust this TLS peer?" (docs/protocol.md, "the host decides"), as the Swift `PinValidator`."""

from __future__ import annotations

import enum
from typing import AbstractSet, Callable, Iterable, Optional, Sequence, Tuple

from .host import canonical_host
from .pins import DomainsConfig, Pin, fold_name


class Verdict(enum.Enum):
    """Callers must reject the handshake on both UNTRUSTED and EMPTY."""

    TRUSTED = "trusted"
    UNTRUSTED = "untrusted"
    #: No live pin exists for the peer's names: reject, and the store needs an update.
    EMPTY = "empty"

    def __str__(self) -> str:
        return self.value


def peer_names(host: str, common_name: Optional[str] = None) -> Tuple[str, ...]:
    """The names a peer is judged by, folded (`fold_name`): H, the host the client connected to
    and had the platform verify the certificate for, then N, the leaf's common name, unless it
    is absent or the same name. H always takes part: N is chosen by the certificate's holder, so
    it may add pins to compare but never lift the requirement to match one. An empty H leaves
    nothing to decide by: `decide` answers UNTRUSTED and `admits` False, whatever N is.

    H is put in its one form here (`canonical_host`), the one place every question passes: a
    spelling with no one form (`127.000.000.001`, a zone id) becomes the empty H, answered
    UNTRUSTED; the one form is already lower case. N is the certificate's own text, folded."""
    host = canonical_host(host) or ""
    # An empty common name names nothing: never a name to admit or to look pins up under.
    if not common_name:
        return (host,)
    common_name = fold_name(common_name)
    return (host,) if common_name == host else (host, common_name)


def admits(names: Tuple[str, ...], expected_common_names: Optional[AbstractSet[str]]) -> bool:
    """Whether the operator's expected names (folded; None: no list) include H or N. An empty H
    admits nothing: N alone is never enough."""
    if not names[0]:
        return False
    return expected_common_names is None or not expected_common_names.isdisjoint(names)


def describe(host: str, common_name: Optional[str] = None) -> str:
    """The peer for messages, as the Swift `PeerNames.described`: the host, and the common name
    when it is another name; both escaped (`escaped`)."""
    if common_name is None or fold_name(common_name) == fold_name(host):
        return f"'{escaped(host)}'"
    return f"'{escaped(host)}' (certificate common name '{escaped(common_name)}')"


_ESCAPES = {"\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t"}


#: The code points written as escapes, the same set as the Swift `LogText.needsEscape`: C0,
#: backslash, DEL and C1; the line and paragraph separators; the bidirectional marks (Arabic
#: letter mark, left-to-right and right-to-left marks), embeddings, overrides and isolates.
ESCAPED_RANGES = ((0x00, 0x1F), (0x5C, 0x5C), (0x7F, 0x9F), (0x061C, 0x061C), (0x200E, 0x200F),
                  (0x2028, 0x2029), (0x202A, 0x202E), (0x2066, 0x2069))


def _needs_escape(character: str) -> bool:
    code = ord(character)
    return any(low <= code <= high for low, high in ESCAPED_RANGES)


def escaped(text: str) -> str:
    """`text` for a message line, as the Swift `LogText.escaped` writes it: control characters,
    line separators and bidirectional marks and overrides as escapes (`ESCAPED_RANGES`), a
    backslash doubled. A certificate's common name is chosen by its holder and must not forge or
    hide lines of a log or terminal."""
    return "".join(_ESCAPES.get(c) or (f"\\u{{{ord(c):x}}}" if _needs_escape(c) else c) for c in text)


def decide(pins: Iterable[Pin], names: Tuple[str, ...], now: int, matches: Callable[[Pin], Optional[bool]],
           expected_common_names: Optional[AbstractSet[str]] = None,
           domains_config: Optional[DomainsConfig] = None) -> Verdict:
    """`names` come from `peer_names`; `pins` are the store's pins (cached then fallback) for
    those names, and `expected_common_names` the store's list folded; `matches` returns None
    when a pin does not apply to what was presented (another depth), else whether it matched."""
    # Without the host the client verified, only the name the certificate's holder chose would
    # be left to decide by (docs/protocol.md, "the host decides"): an empty H is refused, whatever N and the store say.
    if not names[0]:
        return Verdict.UNTRUSTED
    # The operator's expected names first: nothing the server sends widens them.
    if not admits(names, expected_common_names):
        return Verdict.UNTRUSTED
    # Skipped only when no name requires pinning: a CN listed as "not required" must not lift
    # the requirement for the host that was verified (the bypass §5.1 closes).
    if domains_config is not None and not any(domains_config.pinning_required(name) for name in names):
        return Verdict.TRUSTED
    attempts = 0
    for pin in pins:
        if fold_name(pin.name) not in names or pin.is_expired(now):
            continue
        matched = matches(pin)
        if matched:
            return Verdict.TRUSTED
        if matched is not None:
            attempts += 1
    # No pins at all, no live pin for either name, or none at the asked depth: all `empty`.
    return Verdict.UNTRUSTED if attempts else Verdict.EMPTY


def at_depth(fingerprint: bytes, depth: int) -> Callable[[Pin], Optional[bool]]:
    """One certificate digest presented at `depth`: only pins of that depth apply."""
    return lambda pin: pin.fingerprint == fingerprint if pin.depth == depth else None


def in_verified_chain(digests: Sequence[bytes]) -> Callable[[Pin], Optional[bool]]:
    """Digests of the verified chain, leaf first: each pin is compared with the certificate at
    its depth; pins deeper than the chain are skipped."""
    return lambda pin: digests[pin.depth] == pin.fingerprint if pin.depth < len(digests) else None
