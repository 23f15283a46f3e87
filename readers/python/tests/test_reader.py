"""CacheReader behaviour beyond single verdicts: when it reads the file, what it keeps, threads."""

from __future__ import annotations

import base64
import json
import os
import threading

import pytest

import pinkeeper.cache
from pinkeeper import CacheReader, CacheReaderError, Verdict

from conftest import STORE, cache_document, pin, replace

NOW = 1763770000
FP1, FP2 = bytes([1]) * 32, bytes([2]) * 32
B64 = {FP1: base64.b64encode(FP1).decode(), FP2: base64.b64encode(FP2).decode()}


def count_reads(monkeypatch):
    reads = []
    original = pinkeeper.cache._read_file

    def counting(path):
        reads.append(path)
        return original(path)
    monkeypatch.setattr(pinkeeper.cache, "_read_file", counting)
    return reads


def test_an_unchanged_file_is_not_read_again(cache_dir, monkeypatch):
    reads = count_reads(monkeypatch)
    cache_dir(pin("api.example.com", B64[FP1]))
    reader = CacheReader(STORE, cache_directory=cache_dir.directory)
    for _ in range(50):
        assert reader.verdict("api.example.com", FP1, now=NOW) is Verdict.TRUSTED
    assert len(reads) == 1


def test_a_replacement_with_the_same_size_and_time_is_noticed(cache_dir):
    # The daemon renames a new file over the old one: a new inode, even if size and mtime match.
    path = cache_dir(pin("api.example.com", B64[FP1]))
    reader = CacheReader(STORE, cache_directory=cache_dir.directory)
    assert reader.verdict("api.example.com", FP1, now=NOW) is Verdict.TRUSTED
    before = os.stat(path)
    cache_dir(pin("api.example.com", B64[FP2]))
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert os.stat(path).st_size == before.st_size
    assert reader.verdict("api.example.com", FP1, now=NOW) is Verdict.UNTRUSTED
    assert reader.verdict("api.example.com", FP2, now=NOW) is Verdict.TRUSTED


def test_an_unusable_version_keeps_the_last_good_pins_and_says_why(cache_dir):
    path = cache_dir(pin("api.example.com", B64[FP1]))
    reader = CacheReader(STORE, cache_directory=cache_dir.directory)
    replace(path, b'{"fingerprints": [], "pinkeeper": {"format": 9}}')
    assert reader.verdict("api.example.com", FP1, now=NOW) is Verdict.TRUSTED
    assert reader.problem is not None and reader.problem.kind == "invalid"
    assert "pinkeeper.store is missing" in str(reader.problem)
    with pytest.raises(CacheReaderError):
        reader.refresh()
    cache_dir(pin("api.example.com", B64[FP2]))  # the next good version clears the problem
    reader.refresh()
    assert reader.problem is None


def test_a_directory_or_fifo_at_the_path_is_refused_without_waiting(tmp_path):
    (tmp_path / f"{STORE}.json").mkdir()
    with pytest.raises(CacheReaderError) as raised:
        CacheReader(STORE, cache_directory=str(tmp_path))
    assert raised.value.kind == "unreadable"
    fifo_dir = tmp_path / "fifo"
    fifo_dir.mkdir()
    os.mkfifo(fifo_dir / f"{STORE}.json")
    with pytest.raises(CacheReaderError, match="not a regular file"):
        CacheReader(STORE, cache_directory=str(fifo_dir))


def test_a_file_larger_than_the_limit_is_invalid(cache_dir, monkeypatch):
    cache_dir(pin("api.example.com", B64[FP1]))
    monkeypatch.setattr(pinkeeper.cache, "MAXIMUM_FILE_SIZE", 64)
    with pytest.raises(CacheReaderError, match="larger than 64 bytes"):
        CacheReader(STORE, cache_directory=cache_dir.directory)


def test_a_cache_of_another_store_is_an_error_at_start(cache_dir):
    cache_dir(pin("api.example.com", B64[FP1]), store="payments")
    with pytest.raises(CacheReaderError, match="belongs to store 'payments', not 'banking'"):
        CacheReader(STORE, cache_directory=cache_dir.directory)


def test_a_missing_fallback_file_is_an_error(tmp_path):
    with pytest.raises(CacheReaderError, match="does not exist") as raised:
        CacheReader(STORE, cache_directory=str(tmp_path), fallback_file=str(tmp_path / "nope.json"))
    assert raised.value.kind == "unreadable"


def test_threads_always_see_one_whole_version(cache_dir):
    # Versions alternate between pinning FP1 and FP2. Each answer comes from a whole version:
    # trusted or untrusted, never empty (no pins) and never a parse problem (a partial file).
    cache_dir(pin("api.example.com", B64[FP1]))
    reader = CacheReader(STORE, cache_directory=cache_dir.directory)
    stop, wrong = threading.Event(), []

    def ask():
        while not stop.is_set():
            answer = reader.verdict("api.example.com", FP1, now=NOW)
            if answer is Verdict.EMPTY or reader.problem is not None:
                wrong.append((answer, reader.problem))
    threads = [threading.Thread(target=ask) for _ in range(4)]
    for thread in threads:
        thread.start()
    for index in range(200):
        cache_dir(pin("api.example.com", B64[FP2 if index % 2 else FP1]))
    stop.set()
    for thread in threads:
        thread.join()
    assert not wrong


def test_the_default_now_is_the_clock(cache_dir):
    import time
    cache_dir(pin("api.example.com", B64[FP1], expires=int(time.time()) - 10),
              pin("cdn.example.com", B64[FP1], expires=int(time.time()) + 3600))
    reader = CacheReader(STORE, cache_directory=cache_dir.directory)
    assert reader.verdict("api.example.com", FP1) is Verdict.EMPTY
    assert reader.verdict("cdn.example.com", FP1) is Verdict.TRUSTED


def test_the_library_needs_only_the_standard_library(tmp_path):
    # -I -S: no site-packages at all; the reader, the TLS helper and the CLI must still import.
    import subprocess
    import sys
    source = os.path.join(os.path.dirname(__file__), "..", "src")
    code = f"import sys; sys.path.insert(0, {source!r}); import pinkeeper, pinkeeper.tls, pinkeeper.cli"
    subprocess.run([sys.executable, "-I", "-S", "-c", code], check=True)


def test_cache_document_helper_writes_a_valid_cache(tmp_path):
    # The fixtures must produce what the daemon produces, or the tests above prove nothing.
    path = tmp_path / f"{STORE}.json"
    path.write_text(json.dumps(cache_document([pin("a", B64[FP1])])))
    assert CacheReader(STORE, cache_directory=str(tmp_path)).cache.store == STORE


# The two names of PROTOCOL.md §5.1 and how names compare.

def test_names_fold_ascii_letters_and_nothing_else():
    from pinkeeper.pins import fold_name
    assert fold_name("API.Example.COM") == "api.example.com"
    # Each of these is another name, though str.lower(), upper() or casefold() would merge it.
    for other, ascii_name in (("\u212a.example", "k.example"), ("\u0131.example", "i.example"),
                              ("\u017f.example", "s.example"), ("stra\u00dfe", "strasse"),
                              ("\u00dc.example", "\u00fc.example"), ("cafe\u0301", "caf\u00e9")):
        assert fold_name(other) != fold_name(ascii_name), other
    assert fold_name("api.example.com.") != fold_name("api.example.com")  # a trailing dot too


def test_questions_take_the_host_positionally_and_the_common_name_by_keyword(cache_dir):
    cache_dir(pin("api.example.com", B64[FP1]), pin("gw-7.internal.example", B64[FP2]))
    reader = CacheReader(STORE, cache_directory=cache_dir.directory)
    assert reader.verdict("api.example.com", FP1, 0, NOW) is Verdict.TRUSTED
    assert reader.verdict("api.example.com", FP2, 0, NOW) is Verdict.UNTRUSTED
    assert reader.verdict("API.example.com", FP2, 0, NOW, common_name="GW-7.internal.example") is Verdict.TRUSTED
    assert reader.verdict_for_verified_digests("www.example.com", [FP2], NOW,
                                               common_name="gw-7.internal.example") is Verdict.TRUSTED
    assert reader.verdict_for_verified_digests("www.example.com", [FP2], NOW) is Verdict.EMPTY


def test_pins_are_indexed_under_their_folded_names(cache_dir):
    cache_dir(pin("API.example.com", B64[FP1]), pin("api.EXAMPLE.com", B64[FP2]), pin("\u212a.example", B64[FP1]))
    reader = CacheReader(STORE, cache_directory=cache_dir.directory)
    reader.refresh()
    assert sorted(reader._by_name) == ["api.example.com", "\u212a.example"]
    assert len(reader._by_name["api.example.com"]) == 2
    assert reader.verdict("k.example", FP1, now=NOW) is Verdict.EMPTY


def test_domains_config_exempts_only_when_every_name_is_exempt(cache_dir):
    config = {"sslPinningRequiredForUnlisted": False,
              "domains": [{"name": "API.example.com", "sslPinningRequired": True}]}
    cache_dir(pin("api.example.com", B64[FP1]), domains_config=config, mode="challenge")
    reader = CacheReader(STORE, cache_directory=cache_dir.directory)
    assert reader.cache.domains_config.pinning_required("api.EXAMPLE.com")
    assert reader.verdict("unlisted.example", FP2, now=NOW) is Verdict.TRUSTED
    assert reader.verdict("api.example.com", FP2, now=NOW, common_name="unlisted.example") is Verdict.UNTRUSTED
    assert reader.verdict("unlisted.example", FP2, now=NOW, common_name="api.example.com") is Verdict.UNTRUSTED


def test_expected_names_admit_the_host_or_the_common_name(cache_dir):
    cache_dir(pin("api.example.com", B64[FP1]))
    reader = CacheReader(STORE, cache_directory=cache_dir.directory, expected_common_names=["API.example.com"])
    assert reader.admits("api.example.com") and reader.admits("www.example.com", common_name="api.EXAMPLE.com")
    assert not reader.admits("www.example.com") and not reader.admits("www.example.com", common_name="cdn.example.com")
    assert reader.verdict("www.example.com", FP1, now=NOW, common_name="cdn.example.com") is Verdict.UNTRUSTED
    assert reader.verdict("www.example.com", FP1, now=NOW, common_name="api.example.com") is Verdict.TRUSTED
    assert reader.verdict("api.example.com", FP1, now=NOW, common_name="www.example.com") is Verdict.TRUSTED
