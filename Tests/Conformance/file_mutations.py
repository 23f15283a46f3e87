"""Mutations of a cache file for differential.py: bytes flipped, inserted and deleted; members
given twice; modes, formats, keys and signatures of other values and types; numbers spelled
otherwise; deep nesting; byte order marks and UTF-16; the modes of the file and its directory.

Each mutation takes a random.Random and a Variant and changes the variant, returning what it did.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field

import json_tree
from json_tree import Members, Verbatim


@dataclass
class Variant:
    cache: bytes
    cache_mode: int = 0o644
    directory_mode: int = 0o755
    done: list[str] = field(default_factory=list)


BYTE_PALETTE = b'{}[],:"\\0123456789-+.eE \t\r\n\x00\x7f\xc3\xa9\xef\xbb\xbf\xff'
ODD_VALUES = ['"static"', '"challenge"', '"dynamic"', '"Static"', '"static "', '"static\\u0000"', '""', 'null', 'true',
              '0', '1', '"1"', '[]', '{}', '["static"]', '1.0', '"\\u0073tatic"']
NUMBER_SPELLINGS = ["{n}.0", "{n}e0", "{n}E+0", "{n}.00", "0{n}", "-0", "-0.0", "{n}0", "1e3", "+{n}", "-{n}",
                    "18446744073709551616", "9223372036854775808", "9223372036854775807", "-9223372036854775809",
                    "1E400", "NaN", "Infinity", "0x{n}"]
KNOWN_MEMBERS = ["fingerprints", "name", "fingerprint", "expires", "depth", "key", "signature", "domainsConfig", "domains",
                 "sslPinningRequired", "sslPinningRequiredForUnlisted", "pinkeeper", "format", "store", "source", "updated",
                 "nextUpdate", "mode"]


def _flip(rng, variant):
    data = bytearray(variant.cache)
    if not data:
        return "nothing to flip"
    index = rng.randrange(len(data))
    data[index] ^= rng.choice([0x01, 0x20, 0x80, 0xFF, rng.randrange(1, 256)])
    variant.cache = bytes(data)
    return f"byte {index} flipped"


def _insert(rng, variant):
    index = rng.randrange(len(variant.cache) + 1)
    inserted = bytes(rng.choice(BYTE_PALETTE) for _ in range(rng.randint(1, 3)))
    variant.cache = variant.cache[:index] + inserted + variant.cache[index:]
    return f"{inserted!r} inserted at {index}"


def _delete(rng, variant):
    if not variant.cache:
        return "nothing to delete"
    index = rng.randrange(len(variant.cache))
    length = rng.randint(1, 4)
    variant.cache = variant.cache[:index] + variant.cache[index + length:]
    return f"{length} byte(s) deleted at {index}"


def _encoding(rng, variant):
    choice = rng.choice(["utf-8 bom", "utf-16-le", "utf-16-be", "utf-16 bom", "utf-32", "trailing data", "leading space",
                         "trailing nul"])
    text = variant.cache.decode("utf-8", "surrogateescape")
    encoded = {"utf-8 bom": lambda: b"\xef\xbb\xbf" + variant.cache,
               "utf-16-le": lambda: text.encode("utf-16-le", "replace"),
               "utf-16-be": lambda: text.encode("utf-16-be", "replace"),
               "utf-16 bom": lambda: text.encode("utf-16", "replace"),
               "utf-32": lambda: text.encode("utf-32", "replace"),
               "trailing data": lambda: variant.cache + rng.choice([b"x", b"{}", b"\n\n", b" 1", b"]"]),
               "leading space": lambda: b" \n\t" + variant.cache,
               "trailing nul": lambda: variant.cache + b"\x00"}[choice]
    variant.cache = encoded()
    return choice


def permissions(rng, variant):
    if rng.random() < 0.5:
        variant.cache_mode = rng.choice([0o600, 0o640, 0o644, 0o660, 0o664, 0o666, 0o646, 0o602, 0o622, 0o444, 0o4644, 0o1646])
        return f"cache mode {variant.cache_mode:04o}"
    variant.directory_mode = rng.choice([0o700, 0o750, 0o755, 0o775, 0o777, 0o1777, 0o757, 0o1757, 0o773, 0o2775, 0o1775])
    return f"directory mode {variant.directory_mode:04o}"


BYTE_MUTATIONS = [_flip, _insert, _delete, _encoding, permissions]


def _members(tree):
    """Every (path, pair) of an object member in the tree."""
    return [(path, container) for path, container, key in json_tree.walk(tree) if key == 1 and isinstance(container, list)
            and len(container) == 2 and isinstance(path[-1], (str, Verbatim))]


def _duplicate(rng, tree):
    objects = [value for _, container, key in json_tree.walk(tree) for value in [container[key]] if isinstance(value, Members)]
    objects.append(tree)
    target = rng.choice([o for o in objects if o] or [tree])
    if not isinstance(target, Members) or not target:
        return None
    name, value = copy.deepcopy(rng.choice(target))
    spelled = name
    if isinstance(name, str) and name and rng.random() < 0.4:  # the same name with an escape
        spelled = Verbatim('"\\u%04x' % ord(name[0]) + json_tree.dump(name)[2:])
    if rng.random() < 0.5:
        value = _odd_value(rng)
    target.insert(rng.randint(0, len(target)), [spelled, value])
    return f"member {json_tree.dump(name) if isinstance(name, str) else name.text} given twice"


def _odd_value(rng):
    return Verbatim(rng.choice(ODD_VALUES))


def _set_member(rng, tree, where: str, name: str):
    """Sets a member of `pinkeeper`, of a pin or of domainsConfig to an odd value."""
    if not isinstance(tree, Members):
        return None
    if where == "pinkeeper":
        holder = tree.get("pinkeeper")
    elif where == "domainsConfig":
        holder = tree.get("domainsConfig")
        if not isinstance(holder, Members):
            holder = Members([["domains", []]])
            tree.append(["domainsConfig", holder])
    else:
        pins = tree.get("fingerprints")
        holder = rng.choice(pins) if isinstance(pins, list) and pins else None
    if not isinstance(holder, Members):
        return None
    value = _odd_value(rng) if rng.random() < 0.7 else Verbatim(rng.choice(['"k1"', '"AQID"', '"MEUCIQ=="', '"' + "A" * 200 + '"']))
    holder.set(name, value)
    return f"{where}.{name} = {value.text}"


def _mode_or_format(rng, tree):
    return _set_member(rng, tree, "pinkeeper", rng.choice(["mode", "mode", "format", "store"]))


def _key_or_signature(rng, tree):
    return _set_member(rng, tree, rng.choice(["pin", "pin", "domainsConfig"]), rng.choice(["key", "signature"]))


def _number(rng, tree):
    numbers = [(path, container, key) for path, container, key in json_tree.walk(tree)
               if isinstance(container[key], Verbatim) and container[key].text.lstrip("-").isdigit()]
    if not numbers:
        return None
    path, container, key = rng.choice(numbers)
    spelled = rng.choice(NUMBER_SPELLINGS).format(n=container[key].text.lstrip("-"))
    container[key] = Verbatim(spelled)
    return f"number at {_where(path)} spelled {spelled}"


def _nesting(rng, tree):
    if not isinstance(tree, Members):
        return None
    depth = rng.choice([100, 509, 510, 511, 512, 513, 1000])
    tree.append(["nested", Verbatim("[" * depth + "]" * depth)])
    return f"an unknown member nested {depth} deep"


def _member_dropped_or_retyped(rng, tree):
    members = _members(tree)
    if not members:
        return None
    path, pair = rng.choice(members)
    if rng.random() < 0.5:
        pair[1] = _odd_value(rng)
        return f"{_where(path)} = {pair[1].text}"
    pair[0] = rng.choice(KNOWN_MEMBERS + ["Name", "fingerPrint", "x"])
    return f"{_where(path)} renamed {pair[0]}"


def _depth_or_fingerprint(rng, tree):
    pins = tree.get("fingerprints") if isinstance(tree, Members) else None
    if not isinstance(pins, list) or not pins or not isinstance(pins[0], Members):
        return None
    pin = rng.choice([p for p in pins if isinstance(p, Members)])
    if rng.random() < 0.5:
        pin.set("depth", Verbatim(rng.choice(["-1", "0", "1", "2", "9", "10", "4294967296", '"0"', "0.5", "null"])))
        return f"pin depth = {pin.get('depth').text}"
    value = pin.get("fingerprint")
    text = value if isinstance(value, str) else "AQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQE="
    spelled = rng.choice([text.rstrip("="), text.replace("+", "-").replace("/", "_"), " " + text, text + "\n", text + "==",
                          text[:-2] + "A=", text.lower(), "AQ==", ""])
    pin.set("fingerprint", spelled)
    return f"pin fingerprint spelled {spelled!r}"


def _pin_name(rng, tree):
    pins = tree.get("fingerprints") if isinstance(tree, Members) else None
    if not isinstance(pins, list) or not pins or not isinstance(pins[0], Members):
        return None
    pin = rng.choice([p for p in pins if isinstance(p, Members)])
    name = pin.get("name")
    if not isinstance(name, str):
        return None
    spelled = rng.choice([name.upper(), name + ".", "." + name, name.replace(".", "\u3002", 1), name.replace("a", "\u0430", 1),
                          name.replace("e", "e\u0301", 1), name.replace("e", "\u00e9", 1), name + "\u0000", " " + name,
                          name.replace("k", "\u212a"), name.replace("s", "\u017f")])
    pin.set("name", spelled)
    return f"pin name spelled {spelled!r}"


TREE_MUTATIONS = [_duplicate, _mode_or_format, _mode_or_format, _key_or_signature, _key_or_signature, _number, _number,
                  _nesting, _member_dropped_or_retyped, _depth_or_fingerprint, _pin_name]


def _where(path) -> str:
    return ".".join(str(part.text if isinstance(part, Verbatim) else part) for part in path)


def mutate(rng, variant: Variant, count: int):
    """Applies `count` mutations; structural ones while the file is still JSON, byte ones after."""
    for _ in range(count):
        tree = json_tree.parse(variant.cache)
        if tree is not None and rng.random() < 0.8:
            mutation = rng.choice(TREE_MUTATIONS)
            try:
                done = mutation(rng, tree)
                encoded = json_tree.encode(tree) if done is not None else None
            except RecursionError:  # a table case nested deeper than this program goes
                encoded = None
            if encoded is not None:
                variant.cache = encoded
                variant.done.append(done)
                continue
        variant.done.append(rng.choice(BYTE_MUTATIONS)(rng, variant))
