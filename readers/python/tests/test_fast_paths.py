"""The reader's fast paths (strict_json.py, pins.py) against the plain checks they stand in for: the same verdict
on every file of the conformance table and on generated variants of an entry, one rule bent at a
time. The reference visits every value one by one: slow, and plainly right."""

import dataclasses
import json
import re
import string

import pytest

from pinkeeper import Pin
from pinkeeper import pins, strict_json
from pinkeeper.strict_json import MAXIMUM_DEPTH, PinListError, Repeated

from conformance_files import file_content, load_cases

DIGEST = "AQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQE="


# The reference: strict JSON checked value by value.

def reference_pairs(pairs):
    # Grouped first, then a member given more than once becomes Repeated: written apart from
    # strict_json._object_from_pairs, which it checks.
    grouped = {}
    for key, value in pairs:
        grouped.setdefault(key, []).append(value)
    return {key: values[0] if len(values) == 1 else Repeated(values) for key, values in grouped.items()}


def reference_loads(data: bytes):
    if data.startswith(b"\xef\xbb\xbf"):
        raise PinListError("not valid JSON (starts with a UTF-8 byte order mark)", "not-json")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise PinListError("not valid JSON (invalid UTF-8)", "not-json") from None
    try:
        document = json.loads(text, object_pairs_hook=reference_pairs, parse_constant=strict_json._reject_constant,
                              parse_int=strict_json._integer_literal)
    except RecursionError:
        raise PinListError(f"not valid JSON (nested deeper than {MAXIMUM_DEPTH} levels)", "not-json") from None
    except json.JSONDecodeError as error:
        raise PinListError(f"not valid JSON ({error.msg} at character {error.pos})", "not-json") from None
    pending = [(document, 1)]
    while pending:
        value, depth = pending.pop()
        if isinstance(value, str):
            if re.search("[\ud800-\udfff]", value):
                raise PinListError("not valid JSON (a lone surrogate escape)", "not-json")
        elif isinstance(value, Repeated):
            pending.extend((item, depth) for item in value.values)
        elif isinstance(value, (dict, list)):
            if depth > MAXIMUM_DEPTH:
                raise PinListError(f"not valid JSON (nested deeper than {MAXIMUM_DEPTH} levels)", "not-json")
            items = list(value) + list(value.values()) if isinstance(value, dict) else value
            pending.extend((item, depth + 1) for item in items)
    return document


def outcome(load, data: bytes):
    """What a loader makes of `data`: the document (as comparable text) or the reason it refuses."""
    try:
        document = load(data)
    except PinListError as error:
        return "refused", str(error), error.code
    return "parsed", json.dumps(document, default=lambda value: {"repeated": value.values}
                                if isinstance(value, Repeated) else type(value).__name__)


def checked_pins(entries):
    try:
        return [pins._checked_pin(entry, f"fingerprints[{index}]") for index, entry in enumerate(entries)]
    except PinListError:
        return None


# The corpus.

def conformance_files():
    for case in load_cases():
        for data in (file_content(case), *(json.dumps(case[key]).encode() for key in ("previous_cache", "fallback")
                                           if key in case)):
            if data is not None:
                yield case["id"], data


def deep(levels: int) -> str:
    return "[" * levels + "]" * levels


ENTRY = {"name": '"a"', "fingerprint": f'"{DIGEST}"', "expires": "1", "depth": None, "signature": None, "key": None,
         "x": None}
# Values for one member of the middle entry (None: the member is absent); an entry lies at depth 3.
VARIANTS = {
    "name": [None, "null", "1", "true", '["a"]', "{}", '"A\\u0042c"', '"\\u0000"', '"a", "name": "b"',
             '"a", "n\\u0061me": "b"'],
    "fingerprint": [None, "null", "1", f'"{DIGEST[:-2]}Q="', f'"{DIGEST[:-2]}=="', f'"{DIGEST[:-1]}A"',
                    f'"{DIGEST[:-1]}=="', f'"{DIGEST}\\n"', f'" {DIGEST[1:]}"', f'"-{DIGEST[1:]}"', f'"_{DIGEST[1:]}"',
                    f'"\\u0661{DIGEST[1:]}"', '"' + "A" * 43 + '="', '"' + "/" * 42 + 'w="', '"' + "A" * 40 + '===="',
                    f'"{DIGEST}", "fingerprint": "{DIGEST}"', f'"{DIGEST}", "fingerpr\\u0069nt": "{DIGEST}"'],
    "expires": [None, "null", "true", '"1"', "0", "-0", "1.0", "1e3", "-0.0", "1E0", "9223372036854775807",
                "9223372036854775808", "-9223372036854775808", "-9223372036854775809", "9" * 30, "9" * 5000,
                "[1]", "1, \"expires\": 1"],
    "depth": [None, "null", "0", "1", "-1", "-0", "1.0", "true", '"0"', "9223372036854775807", "9223372036854775808",
              "0, \"depth\": 0"],
    "signature": [None, "null", '"s"', "1", "[]", '"s", "signature": "t"', '"s", "signature": "t", "signature": "u"'],
    # Which key verified the entry: not used by a reader, but known, so checked as signature is.
    "key": [None, "null", '"k"', "1", "true", "{}", '["k"]', '"k", "key": "l"', '"k", "k\\u0065y": "l"', 'null, "key": null'],
    "x": [None, "1, \"x\": [2]", "1, \"x\": [2], \"x\": {\"z\": 3}", '"\\ud800"', '"\\udc00\\ud800"', '"\\ud83d\\ude00"',
          '"\\uD83D\\uDE00"',
          '"\\\\ud800"', '"\\\\\\ud800"', "NaN", "-Infinity", "1, \"\\ud800\": 1", deep(MAXIMUM_DEPTH - 3),
          deep(MAXIMUM_DEPTH - 2), "1, \"x\": " + deep(MAXIMUM_DEPTH - 2), '{"y": ' + deep(MAXIMUM_DEPTH - 4) + "}",
          '{"y": ' + deep(MAXIMUM_DEPTH - 3) + "}", '{"\\udfff": 1}',
          # What the hook-free parse (strict_json._plain_document) must not take for plain: a
          # member repeated without any escape, integer literals of 20 and 21 characters, a
          # quote or a surrogate behind a backslash, a repeat hidden behind an escaped quote.
          '"a", "x": "b"', '"a:b", "x": 1', '1, "x": "a", "x": "b"', '{"z": 1, "z": 2}', '[{"z": "a", "z": "a"}]',
          "9" * 20, "9" * 21, "-" + "9" * 19, "-" + "9" * 20, "-" + "0" * 20, '"' + "9" * 30 + '"',
          "[" + "1, " * 30 + "1]",
          '"\\""', '"\\"", "x": "\\""', '"\\", \\"x\\": 1"', '"\\ud83d"', '"a", "\\u0078": "b"',
          deep(MAXIMUM_DEPTH - 2) + ', "x": 1'],
}


def entry_text(**changes) -> str:
    members = {**ENTRY, **changes}
    return "{" + ", ".join(f'"{key}": {value}' for key, value in members.items() if value is not None) + "}"


def variant_file(key: str, value) -> bytes:
    good = entry_text()
    entries = f"[{good}, {entry_text(**{key: value})}, {good}]"
    return ('{"fingerprints": ' + entries + ', "pinkeeper": {"format": 1, "store": "banking", "source": "s", '
            '"updated": 1, "nextUpdate": 2}}').encode()


def variant_files():
    good = entry_text()
    for key, values in VARIANTS.items():
        for value in values:
            yield f"{key}={str(value)[:40]}", variant_file(key, value)
    for entries in ("[]", "[1]", "[null]", "[[]]", f"[{good}, 1]", '"x"', f"[{good}], \"fingerprints\": []"):
        yield f"fingerprints={entries[:20]}", ('{"fingerprints": ' + entries + "}").encode()


CORPUS = list(conformance_files()) + list(variant_files())


@pytest.mark.parametrize("data", [data for _, data in CORPUS], ids=[name for name, _ in CORPUS])
def test_fast_paths_agree_with_the_reference(data):
    fast, reference = outcome(strict_json.loads_json, data), outcome(reference_loads, data)
    assert fast == reference
    if fast[0] == "parsed":
        document = strict_json.loads_json(data)
        entries = document.get("fingerprints") if isinstance(document, dict) else None
        if isinstance(entries, list):
            # All plainly valid (the fast path's pins), or at least one entry refused.
            assert pins._plain_pins(entries) == checked_pins(entries)


def plain_outcome(data: bytes):
    """What the hook-free parse makes of `data`: None when it does not vouch for its result."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    document = strict_json._plain_document(data, text)
    return None if document is strict_json._UNPROVEN else outcome(lambda _: document, data)


@pytest.mark.parametrize("data", [data for _, data in CORPUS], ids=[name for name, _ in CORPUS])
def test_the_plain_parse_agrees_with_the_reference_whenever_it_vouches(data):
    plain = plain_outcome(data)
    assert plain is None or plain == outcome(reference_loads, data)


def test_the_plain_parse_vouches_for_plain_files_only():
    # A file as the daemon writes it, and variants with nothing to check beyond json's own parse.
    for key, value in (("name", None), ("x", None), ("expires", "9223372036854775807"),
                       ("expires", "-9223372036854775808"), ("x", "9" * 20), ("x", "-" + "9" * 19),
                       ("x", deep(MAXIMUM_DEPTH - 3))):
        assert plain_outcome(variant_file(key, value)) is not None, (key, value)
    # A repeated member, a long integer literal, an escape, too deep: each left to the checked parse.
    for key, value in (("name", '"a", "name": "b"'), ("x", '"a", "x": "b"'), ("x", '1, "x": "a", "x": "b"'),
                       ("x", '{"z": 1, "z": 2}'), ("x", '[{"z": "a", "z": "a"}]'), ("x", "9" * 21),
                       ("x", "-" + "9" * 20), ("expires", "9" * 30), ("x", '"\\""'), ("x", '"\\ud800"'),
                       ("x", deep(MAXIMUM_DEPTH - 2)), ("x", "1, \"x\": " + deep(MAXIMUM_DEPTH - 2))):
        assert plain_outcome(variant_file(key, value)) is None, (key, value)
    assert sum(plain_outcome(data) is not None for _, data in CORPUS) > len(CORPUS) // 3


def test_the_corpus_reaches_every_outcome():
    seen = set()
    for _, data in CORPUS:
        kind, reason = outcome(strict_json.loads_json, data)[:2]
        if kind == "refused":
            seen.add(re.sub(r" at character \d+|\(.*? is not a JSON number\)", "", reason))
            continue
        document = strict_json.loads_json(data)
        entries = document.get("fingerprints") if isinstance(document, dict) else None
        if isinstance(entries, list):
            seen.add("entries valid" if pins._plain_pins(entries) is not None else "an entry refused")
    assert {"entries valid", "an entry refused", "not valid JSON (a lone surrogate escape)",
            f"not valid JSON (nested deeper than {MAXIMUM_DEPTH} levels)", "not valid JSON (invalid UTF-8)"} <= seen


def test_fold_name_equals_the_ascii_translation():
    table = str.maketrans(string.ascii_uppercase, string.ascii_lowercase)
    for name in ("API.Example.COM", "", "a-Z_0.9", "ÜBER.example", "\u212a.example", "İ.example", "ı",
                 "\u00c9e\u0301", "x\u0130Y", "\U0001F600A", string.printable, "".join(map(chr, range(256)))):
        assert pins.fold_name(name) == name.translate(table)


def test_pin_is_still_a_frozen_dataclass():
    digest = bytes(range(32))
    pin = Pin("a", digest, 5)
    assert pin == Pin(name="a", fingerprint=digest, expires=5, depth=0) != Pin("a", digest, 5, 1)
    assert hash(pin) == hash(Pin("a", digest, 5, 0))
    assert [field.name for field in dataclasses.fields(Pin)] == ["name", "fingerprint", "expires", "depth"]
    assert repr(pin) == f"Pin(name='a', fingerprint={digest!r}, expires=5, depth=0)"
    with pytest.raises(dataclasses.FrozenInstanceError):
        pin.depth = 1
