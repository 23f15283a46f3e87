"""Strict JSON (RFC 8259) as the Swift reader reads it, for cache and fallback files: UTF-8
without a byte order mark, no NaN or Infinity, no lone surrogate escape, at most MAXIMUM_DEPTH
levels, and a member given twice kept as a `Repeated` for the caller to refuse or skip."""

from __future__ import annotations

import json
import re
from itertools import chain, compress, repeat
from operator import is_
from typing import Any, Optional


class PinListError(ValueError):
    """Why a document is not a usable fingerprint list; the message names the field. `code` is
    the reader's error code (errors.ERROR_KINDS): "not-json" for what is not strict JSON,
    "invalid-content" (the default) for JSON that is not a valid list, and so on."""

    def __init__(self, message: str, code: str = "invalid-content"):
        super().__init__(message)
        self.code = code


def not_json(reason: str) -> PinListError:
    return PinListError(f"not valid JSON ({reason})", "not-json")


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
    raise not_json(f"{constant} is not a JSON number")


def loads_json(data: bytes) -> Any:
    """Strict JSON (RFC 8259), as the Swift reader reads it: UTF-8 without a byte order mark, no
    NaN or Infinity, no lone surrogate escape, nothing after the document, at most
    MAXIMUM_DEPTH levels; a member given twice becomes a `Repeated`. Python's json alone would
    accept the constants and lone surrogates, and keep only a repeated member's last value."""
    if data.startswith(b"\xef\xbb\xbf"):
        raise not_json("starts with a UTF-8 byte order mark")
    try:
        text = data.decode("utf-8")  # strict: no invalid, overlong or surrogate sequences
    except UnicodeDecodeError:
        raise not_json("invalid UTF-8") from None
    document = _plain_document(data, text)
    return _checked_document(text) if document is _UNPROVEN else document


def _checked_document(text: str) -> Any:
    """Every rule checked while and after parsing: a Python call per object and per integer."""
    try:
        document = json.loads(text, object_pairs_hook=_object_from_pairs, parse_constant=_reject_constant,
                              parse_int=_integer_literal)
    except RecursionError:
        raise not_json(f"nested deeper than {MAXIMUM_DEPTH} levels") from None
    except json.JSONDecodeError as error:
        raise not_json(f"{error.msg} at character {error.pos}") from None
    _check_depth(document)
    # The text is strict UTF-8, so a surrogate in a parsed string can only come from an escape
    # \uD800-\uDFFF: without one in the text (the common case) there is nothing to look for.
    if _SURROGATE_ESCAPE.search(text):
        _check_surrogates(document)
    return document


_UNPROVEN = object()


def _plain_document(data: bytes, text: str) -> Any:
    """The document as json builds it without any hook (two to three times faster), when that is
    provably what `_checked_document` returns; else _UNPROVEN, and `_checked_document` decides, refusals
    included: this path never refuses anything itself. The proof, from the text and the result:
    - no backslash: no escape, so no lone surrogate, and every '"' opens or closes a string;
    - no run of 21 digits or '-': every integer literal has at most 20 characters, which
      `_integer_literal` hands to int() as json does;
    - the document holds as many member names and strings as the text has (half its '"'): json
      keeps one member of each name, so no object had a member twice (no `Repeated` to make);
    - at most MAXIMUM_DEPTH levels."""
    if b"\\" in data or _LONG_NUMBER in data.translate(_NUMBER_BYTES_AS_ZERO):
        return _UNPROVEN
    try:
        document = json.loads(text, parse_constant=_reject_constant)
    except (ValueError, RecursionError):  # JSONDecodeError and PinListError are ValueErrors
        return _UNPROVEN
    if _strings_within_depth(document) * 2 != text.count('"'):
        return _UNPROVEN
    return document


#: Digits and "-" become "0", every other byte a space (UTF-8 multibyte sequences never hold ASCII bytes).
_NUMBER_BYTES_AS_ZERO = bytes(0x30 if 0x30 <= byte <= 0x39 or byte == 0x2D else 0x20 for byte in range(256))
_LONG_NUMBER = b"0" * 21


def _strings_within_depth(document: Any) -> int:
    """Member names plus string values, counted level by level by the interpreter's builtins; -1
    (no count matches it) when the document is nested deeper than MAXIMUM_DEPTH. Only for a
    document json built without hooks: no `Repeated` in it."""
    values, depth, strings = [document], 0, 0
    while True:
        kinds = list(map(type, values))
        present = set(kinds)
        if str in present:
            strings += kinds.count(str)
        if dict not in present and list not in present:
            return strings
        depth += 1
        if depth > MAXIMUM_DEPTH:
            return -1
        dicts, lists = (_of_kind(values, kinds, present, kind) for kind in (dict, list))
        strings += sum(map(len, dicts))
        values = list(chain(chain.from_iterable(map(dict.values, dicts)), chain.from_iterable(lists)))


def _of_kind(values: list, kinds: list, present: set, kind: type) -> list:
    if kind not in present:
        return []
    return values if len(present) == 1 else list(compress(values, map(is_, kinds, repeat(kind))))


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
            raise not_json(f"nested deeper than {MAXIMUM_DEPTH} levels")
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
                raise not_json("a lone surrogate escape")
        elif isinstance(value, Repeated):
            pending.extend(value.values)
        elif isinstance(value, dict):
            pending.extend(value)
            pending.extend(value.values())
        elif isinstance(value, list):
            pending.extend(value)


