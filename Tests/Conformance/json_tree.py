"""A JSON document as a tree that keeps what a mutation needs and json.loads would lose: members
given twice, the spelling of every number, and text written verbatim (escapes, nesting)."""

from __future__ import annotations

import json
from dataclasses import dataclass


class Members(list):
    """An object: a list of [name, value] pairs, in order, duplicates kept."""

    def get(self, name, default=None):
        for member, value in self:
            if member == name:
                return value
        return default

    def set(self, name, value):
        for pair in self:
            if pair[0] == name:
                pair[1] = value
                return
        self.append([name, value])

    def remove(self, name):
        self[:] = [pair for pair in self if pair[0] != name]


@dataclass
class Verbatim:
    """Text written into the document as it is: a number's spelling, an escaped name, nesting."""
    text: str


def parse(data: bytes):
    """The tree of a document, or None when it is not JSON that json.loads reads."""
    try:
        return json.loads(data.decode("utf-8"), object_pairs_hook=lambda pairs: Members([list(pair) for pair in pairs]),
                          parse_int=Verbatim, parse_float=Verbatim, parse_constant=Verbatim)
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None


def dump(value) -> str:
    if isinstance(value, Members):
        return "{" + ", ".join(f"{_name(name)}: {dump(member)}" for name, member in value) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(dump(item) for item in value) + "]"
    if isinstance(value, Verbatim):
        return value.text
    if isinstance(value, str):  # a lone surrogate stays an escape
        return json.dumps(value, ensure_ascii=any(0xD800 <= ord(c) <= 0xDFFF for c in value))
    return json.dumps(value)  # True, False, None, int


def _name(name) -> str:
    return name.text if isinstance(name, Verbatim) else dump(name)


def encode(value) -> bytes:
    return dump(value).encode("utf-8", "surrogatepass")


def walk(value, path=()):
    """Every (path, container, key) below value: container[key] is the value at path."""
    if isinstance(value, Members):
        for index, pair in enumerate(value):
            yield path + (pair[0],), pair, 1
            yield from walk(pair[1], path + (pair[0],))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield path + (index,), value, index
            yield from walk(item, path + (index,))
