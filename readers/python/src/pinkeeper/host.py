"""H in one spelling (docs/protocol.md, "H in one spelling"): the one form of the host a client
connected to, before anything is looked up under it.

TLS stacks accept several spellings of one address (`0:0:0:0:0:0:0:1`, `::0:1` and `0000::1` are
all `::1`; OpenSSL reads `127.000.000.001` as `127.0.0.1`) and match each of them against the
certificate. Looked up as typed, such a spelling would miss the host's pins and its domainsConfig
entry and count as an unlisted name. So every question first turns H into its one form, and a
spelling that has none is refused (never looked up).
"""

from __future__ import annotations

import re
import string
from typing import List, Optional

_HEX_DIGITS = frozenset(string.hexdigits)
_DECIMAL_DIGITS = frozenset(string.digits)
#: Dots that IDNA would map to ".": a name holding one is refused, never mapped.
_OTHER_DOTS = frozenset("\u3002\uff0e\uff61")
_ASCII_LETTERS_FOLDED = str.maketrans(string.ascii_uppercase, string.ascii_lowercase)
#: What most hosts are, and what the steps below leave as it is: lower-case ASCII labels, none
#: empty, no trailing dot, the last with a character other than a digit and not starting with
#: "0x" (so not an IPv4 literal). One regular expression instead of the steps, at every question.
_ALREADY_ONE_FORM = re.compile(r"(?:[a-z0-9_-]+\.)*(?!0x)[a-z0-9_-]*[a-z_-][a-z0-9_-]*")


def canonical_host(name: str) -> Optional[str]:
    """The one form of `name`, or None when it is refused. IP literals become their canonical
    text (IPv4 as four decimal parts, IPv6 as RFC 5952 with `::ffff:a.b.c.d` for an IPv4-mapped
    address); a DNS name loses one trailing dot and its ASCII capitals, and a label holding any
    other character becomes its Punycode A-label as written (no IDNA mapping or normalisation)."""
    if not isinstance(name, str) or not name:
        return None
    if _ALREADY_ONE_FORM.fullmatch(name):
        return name
    if name.startswith("["):
        return _ipv6(name[1:-1]) if name.endswith("]") and len(name) >= 2 else None
    if ":" in name:
        return _ipv6(name)
    if _looks_like_ipv4(name):
        return name if _ipv4_parts(name) is not None else None
    return _dns_name(name)


def _looks_like_ipv4(name: str) -> bool:
    """Whether `name` is to be read as an IPv4 literal: its last label (one trailing dot aside)
    is all ASCII digits or starts with 0x, or it holds nothing but ASCII digits and dots. Such a
    name is never a DNS name, so a spelling the strict parse refuses is refused outright."""
    last = (name[:-1] if name.endswith(".") else name).rpartition(".")[2]
    if last and set(last) <= _DECIMAL_DIGITS:
        return True
    if last[:2] in ("0x", "0X"):
        return True
    return set(name) <= _DECIMAL_DIGITS | {"."}


def _ipv4_parts(text: str) -> Optional[List[int]]:
    """Four decimal parts of 0-255 without leading zeros ("0" itself is fine), else None."""
    parts = text.split(".")
    if len(parts) != 4:
        return None
    values = []
    for part in parts:
        if not part or len(part) > 3 or not set(part) <= _DECIMAL_DIGITS or (part[0] == "0" and part != "0"):
            return None
        value = int(part)
        if value > 255:
            return None
        values.append(value)
    return values


def _ipv6(text: str) -> Optional[str]:
    """RFC 5952 text of an address `inet_pton(AF_INET6)` accepts; None for anything else, a
    zone id included (it names an interface of this machine, which no certificate can)."""
    groups = _ipv6_groups(text)
    return None if groups is None else _rfc5952(groups)


def _ipv6_groups(text: str) -> Optional[List[int]]:
    """The eight 16-bit groups: up to eight of one to four hex digits, at most one `::`, and a
    dotted IPv4 address (two groups) only at the very end."""
    if "%" in text:
        return None
    if "::" in text:
        head, _, tail = text.partition("::")
        if "::" in tail:
            return None
        before, after = _hex_groups(head, False), _hex_groups(tail, True)
        if before is None or after is None or len(before) + len(after) > 7:
            return None
        return before + [0] * (8 - len(before) - len(after)) + after
    groups = _hex_groups(text, True)
    return groups if groups is not None and len(groups) == 8 else None


def _hex_groups(text: str, may_end_dotted: bool) -> Optional[List[int]]:
    if not text:
        return []
    pieces = text.split(":")
    groups: List[int] = []
    for index, piece in enumerate(pieces):
        if "." in piece and may_end_dotted and index == len(pieces) - 1:
            parts = _ipv4_parts(piece)
            if parts is None:
                return None
            groups += [parts[0] << 8 | parts[1], parts[2] << 8 | parts[3]]
        elif 1 <= len(piece) <= 4 and set(piece) <= _HEX_DIGITS:
            groups.append(int(piece, 16))
        else:
            return None
    return groups


def _rfc5952(groups: List[int]) -> str:
    if groups[:6] == [0, 0, 0, 0, 0, 0xFFFF]:
        return "::ffff:" + ".".join(str(byte) for group in groups[6:] for byte in (group >> 8, group & 0xFF))
    start, length = _longest_zero_run(groups)
    text = [format(group, "x") for group in groups]
    if length < 2:
        return ":".join(text)
    return ":".join(text[:start]) + "::" + ":".join(text[start + length:])


def _longest_zero_run(groups: List[int]):
    """(start, length) of the first longest run of zero groups; length 0 when there is none."""
    best_start, best_length, start = 0, 0, None
    for index, group in enumerate(groups + [1]):
        if group == 0 and start is None:
            start = index
        elif group != 0 and start is not None:
            if index - start > best_length:
                best_start, best_length = start, index - start
            start = None
    return best_start, best_length


def _dns_name(name: str) -> Optional[str]:
    if not _OTHER_DOTS.isdisjoint(name):
        return None
    if name.endswith("."):
        name = name[:-1]
    labels = name.split(".")
    if not name or "" in labels:
        return None
    spelled = []
    for label in labels:
        label = label.translate(_ASCII_LETTERS_FOLDED)
        if not label.isascii():
            encoded = _punycode(label)
            if encoded is None:
                return None
            label = "xn--" + encoded
        spelled.append(label)
    return ".".join(spelled)


def _punycode(label: str) -> Optional[str]:
    """RFC 3492 Punycode of `label` exactly as written; None when it holds a surrogate (from
    bytes that were not UTF-8), which is not a Unicode scalar and has no encoding."""
    if any("\ud800" <= character <= "\udfff" for character in label):
        return None
    return label.encode("punycode").decode("ascii")
