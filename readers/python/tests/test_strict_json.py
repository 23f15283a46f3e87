"""Strict JSON beyond the conformance table: the reasons given, and inputs on which Python's json
raises something other than a refusal (the reader must keep its last good pins, not raise)."""

import base64

import pytest

from pinkeeper import CacheReader, Verdict
from pinkeeper.cache import CacheFile
from pinkeeper.pins import PinListError

from conftest import STORE, pin, replace

NOW = 1763770000
FP1 = bytes([1]) * 32
DIGEST = base64.b64encode(FP1).decode()
META = b'"pinkeeper": {"format": 1, "store": "banking", "source": "s", "updated": 1, "nextUpdate": 2}'


def document(entry: bytes = b'"name": "a", "fingerprint": "' + DIGEST.encode() + b'", "expires": 1', extra: bytes = b"") -> bytes:
    return b'{"fingerprints": [{' + entry + b'}], ' + extra + META + b"}"


@pytest.mark.parametrize("data, reason", [
    (document(b'"name": "a", "name": "b", "fingerprint": "' + DIGEST.encode() + b'", "expires": 1'),
     "fingerprints[0].name appears more than once"),
    (b'{"fingerprints": [], "fingerprints": [], ' + META + b"}", "fingerprints appears more than once"),
    (document(extra=b'"pinkeeper": {}, '), "pinkeeper appears more than once"),
    (document().replace(b'"updated": 1', b'"updated": 1, "updated": 1'), "pinkeeper.updated appears more than once"),
    (document().replace(b'"updated": 1', b'"updated": 1.0'), "pinkeeper.updated is not an integer"),
    (document(extra=b'"x": "\\ud800", '), "a lone surrogate escape"),
    (document(extra=b'"\\udc00": 1, '), "a lone surrogate escape"),
    # A repeated member nobody reads is skipped, but every one of its values is still checked.
    (document(extra=b'"x": "\\ud800", "x": 1, '), "a lone surrogate escape"),
    (b"\xef\xbb\xbf" + document(), "byte order mark"),
    (document(extra=b'"x": "\xed\xa0\x80", '), "invalid UTF-8"),
    (document(extra=b'"x": NaN, '), "NaN is not a JSON number"),
    (document(extra=b'"x": ' + b"[" * 512 + b"]" * 512 + b", "), "nested deeper than 512 levels"),
], ids=lambda value: value if isinstance(value, str) else "")
def test_each_refusal_says_why(data, reason):
    with pytest.raises(PinListError) as raised:
        CacheFile.parse(data)
    assert reason in str(raised.value)


def test_what_stays_accepted():
    repeated_unknown = document(b'"name": "a", "x": 1, "x": [2], "fingerprint": "' + DIGEST.encode() + b'", "expires": 1',
                                extra=b'"x": "\\ud83d\\ude00", "x": {}, ')
    assert CacheFile.parse(repeated_unknown).pins[0].name == "a"
    # An integer no 64-bit field could hold, where no field is read: skipped like any value.
    assert CacheFile.parse(document(extra=b'"x": ' + b"9" * 5000 + b", ")).pins[0].expires == 1
    assert CacheFile.parse(document(extra=b'"x": ' + b"[" * 511 + b"]" * 511 + b", ")).pins[0].expires == 1


@pytest.mark.parametrize("bad", [
    # json's int() refuses more than 4300 digits with a ValueError of its own.
    document(b'"name": "a", "fingerprint": "' + DIGEST.encode() + b'", "expires": ' + b"9" * 5000),
    # json's recursion ends in a RecursionError long before the end of this.
    document(extra=b'"x": ' + b"[" * 100000 + b"]" * 100000 + b", "),
], ids=["expires-of-5000-digits", "100000-levels"])
def test_inputs_that_make_pythons_json_raise_are_refused_versions(cache_dir, bad):
    cache_dir(pin("api.example.com", DIGEST))
    reader = CacheReader(STORE, cache_directory=cache_dir.directory)
    replace(cache_dir.path, bad)
    assert reader.verdict("api.example.com", FP1, now=NOW) is Verdict.TRUSTED
    assert reader.problem is not None and reader.problem.kind == "invalid"
