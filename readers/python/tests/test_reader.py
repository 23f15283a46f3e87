"""CacheReader behaviour beyond single verdicts: when it reads the file, what it keeps, threads."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import threading

import pytest

import pinkeeper.cache
import pinkeeper.files
from pinkeeper import CacheReader, CacheReaderError, Verdict

from conftest import STORE, cache_document, domains_config, pin, replace

NOW = 1763770000
SYMLINK = "{path} is a symlink, which is never followed: remove it, the daemon publishes a regular file there"
FP1, FP2 = bytes([1]) * 32, bytes([2]) * 32
B64 = {FP1: base64.b64encode(FP1).decode(), FP2: base64.b64encode(FP2).decode()}


def count_reads(monkeypatch):
    reads = []
    original = pinkeeper.cache.read_file

    def counting(path, *args, **kwargs):
        reads.append(path)
        return original(path, *args, **kwargs)
    monkeypatch.setattr(pinkeeper.cache, "read_file", counting)
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
    assert (raised.value.code, raised.value.kind) == ("not-regular-file", "unreadable")
    fifo_dir = tmp_path / "fifo"
    fifo_dir.mkdir()
    os.mkfifo(fifo_dir / f"{STORE}.json")
    with pytest.raises(CacheReaderError, match="not a regular file"):
        CacheReader(STORE, cache_directory=str(fifo_dir))


def publish_symlink(path, target):
    """Puts a symlink to `target` at `path` in one step (a rename), as a writer of the directory could."""
    link = path.with_name(f".{path.name}.link")
    os.symlink(target, link)
    os.rename(link, path)


def test_a_symlink_swapped_in_for_the_cache_file_is_never_followed(cache_dir, tmp_path):
    # The link points at a valid cache file of the same store that pins FP2 instead: followed, it
    # would decide. The Swift and Java readers refuse it; the last good version stays in use.
    path = cache_dir(pin("api.example.com", B64[FP1]))
    reader = CacheReader(STORE, cache_directory=cache_dir.directory)
    assert reader.verdict("api.example.com", FP1, now=NOW) is Verdict.TRUSTED
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / f"{STORE}.json").write_text(json.dumps(cache_document([pin("api.example.com", B64[FP2])])))
    publish_symlink(path, elsewhere / f"{STORE}.json")
    assert reader.verdict("api.example.com", FP2, now=NOW) is Verdict.UNTRUSTED
    assert reader.verdict("api.example.com", FP1, now=NOW) is Verdict.TRUSTED
    assert reader.problem is not None and reader.problem.kind == "unreadable"
    assert str(reader.problem) == SYMLINK.format(path=path)
    with pytest.raises(CacheReaderError, match="is a symlink, which is never followed"):
        reader.refresh()
    with pytest.raises(CacheReaderError, match="is a symlink, which is never followed") as raised:
        CacheReader(STORE, cache_directory=cache_dir.directory)  # nothing good to keep: an error at start
    assert (raised.value.code, raised.value.kind) == ("symlink", "unreadable")
    cache_dir(pin("api.example.com", B64[FP2]))  # the daemon's next version replaces the link
    assert reader.verdict("api.example.com", FP2, now=NOW) is Verdict.TRUSTED and reader.problem is None


def test_a_dangling_symlink_is_refused_not_taken_for_a_missing_file(cache_dir, tmp_path):
    # The file's identity comes from the link itself (lstat): following it would find nothing and
    # read as "no file", dropping every pin instead of keeping the last good ones.
    path = cache_dir(pin("api.example.com", B64[FP1]))
    reader = CacheReader(STORE, cache_directory=cache_dir.directory)
    publish_symlink(path, tmp_path / "nowhere.json")
    assert reader.verdict("api.example.com", FP1, now=NOW) is Verdict.TRUSTED
    assert str(reader.problem) == SYMLINK.format(path=path)


def test_a_symlink_is_looked_at_once_per_version(cache_dir, tmp_path, monkeypatch):
    path = cache_dir(pin("api.example.com", B64[FP1]))
    reader = CacheReader(STORE, cache_directory=cache_dir.directory)
    reads = count_reads(monkeypatch)
    publish_symlink(path, tmp_path / "nowhere.json")
    for _ in range(5):
        assert reader.verdict("api.example.com", FP1, now=NOW) is Verdict.TRUSTED
    assert len(reads) == 1


def test_the_fallback_file_may_be_a_symlink(tmp_path):
    # Unlike the cache file it is the operator's configuration, as in the Swift reader.
    (tmp_path / "lists").mkdir()
    (tmp_path / "lists" / "fallback.json").write_text(json.dumps({"fingerprints": [pin("api.example.com", B64[FP1])]}))
    os.symlink(tmp_path / "lists" / "fallback.json", tmp_path / "fallback.json")
    reader = CacheReader(STORE, cache_directory=str(tmp_path), fallback_file=str(tmp_path / "fallback.json"))
    assert reader.verdict("api.example.com", FP1, now=NOW) is Verdict.TRUSTED


def test_a_file_larger_than_the_limit_is_invalid(cache_dir, monkeypatch):
    cache_dir(pin("api.example.com", B64[FP1]))
    monkeypatch.setattr(pinkeeper.files, "MAXIMUM_FILE_SIZE", 64)
    with pytest.raises(CacheReaderError, match="larger than 64 bytes") as raised:
        CacheReader(STORE, cache_directory=cache_dir.directory)
    assert (raised.value.code, raised.value.kind) == ("too-large", "invalid")


def test_a_cache_of_another_store_is_an_error_at_start(cache_dir):
    cache_dir(pin("api.example.com", B64[FP1]), store="payments")
    with pytest.raises(CacheReaderError, match="belongs to store 'payments', not 'banking'") as raised:
        CacheReader(STORE, cache_directory=cache_dir.directory)
    assert raised.value.code == "wrong-store"


def test_a_missing_fallback_file_is_an_error(tmp_path):
    with pytest.raises(CacheReaderError, match="does not exist") as raised:
        CacheReader(STORE, cache_directory=str(tmp_path), fallback_file=str(tmp_path / "nope.json"))
    assert (raised.value.code, raised.value.kind) == ("missing", "unreadable")


def test_a_cache_file_made_writable_by_others_in_place_is_refused_at_the_next_question(cache_dir):
    # Same inode, size and modification time: only the change time says the mode moved.
    path = cache_dir(pin("api.example.com", B64[FP1]))
    reader = CacheReader(STORE, cache_directory=cache_dir.directory)
    assert reader.verdict("api.example.com", FP1, now=NOW) is Verdict.TRUSTED
    os.chmod(path, 0o666)
    assert reader.verdict("api.example.com", FP1, now=NOW) is Verdict.TRUSTED  # the last good pins stay
    assert reader.problem is not None and reader.problem.code == "insecure-permissions"
    assert str(reader.problem) == (f"{path} is writable by other users (mode 0666), who could plant pins in it: "
                                   "refused until they cannot write it (chmod o-w)")
    os.chmod(path, 0o644)
    assert reader.verdict("api.example.com", FP1, now=NOW) is Verdict.TRUSTED and reader.problem is None


def test_refresh_checks_the_directory_again(cache_dir, tmp_path):
    # A directory's mode is not the file's identity: questions do not see it change, an explicit
    # re-read does (and a file replaced there is read, and refused, at the next question anyway).
    cache_dir(pin("api.example.com", B64[FP1]))
    reader = CacheReader(STORE, cache_directory=cache_dir.directory)
    os.chmod(tmp_path, 0o777)
    with pytest.raises(CacheReaderError, match=r"is in .*, which other users may write \(mode 0777, no sticky bit\)") as raised:
        reader.refresh()
    assert raised.value.code == "insecure-permissions"
    cache_dir(pin("api.example.com", B64[FP2]))
    assert reader.verdict("api.example.com", FP2, now=NOW) is Verdict.UNTRUSTED
    os.chmod(tmp_path, 0o1777)  # the sticky bit: others may no longer replace the daemon's files
    reader.refresh()
    assert reader.verdict("api.example.com", FP2, now=NOW) is Verdict.TRUSTED


def test_a_fallback_symlink_is_checked_where_it_points(tmp_path):
    lists = tmp_path / "lists"
    lists.mkdir()
    (lists / "fallback.json").write_text(json.dumps({"fingerprints": [pin("api.example.com", B64[FP1])]}))
    os.symlink(lists / "fallback.json", tmp_path / "fallback.json")
    os.chmod(lists, 0o777)
    with pytest.raises(CacheReaderError, match=f"is in {lists}, which other users may write") as raised:
        CacheReader(STORE, cache_directory=str(tmp_path), fallback_file=str(tmp_path / "fallback.json"))
    assert raised.value.code == "insecure-permissions"


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


# The two names (docs/protocol.md, "the host decides") and how names compare.

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


# An empty host (docs/protocol.md, "the host decides"): nothing to decide by, so every question answers untrusted.

DER = b"stands for a certificate"
FP_DER = hashlib.sha256(DER).digest()


def test_an_empty_host_is_untrusted_in_every_question(cache_dir, tmp_path):
    # Whatever would otherwise pass: a CN pinned to this certificate, in the cache and in the
    # fallback pins, a pin listed under the empty name, and a domainsConfig that exempts every
    # unlisted name.
    fallback = tmp_path / "fallback.json"
    fallback.write_text(json.dumps({"fingerprints": [pin("gw.example", base64.b64encode(FP_DER).decode())]}))
    cache_dir(pin("gw.example", base64.b64encode(FP_DER).decode()), pin("", base64.b64encode(FP_DER).decode()),
              pin("api.example.com", B64[FP1]),
              mode="challenge", domains_config=domains_config(False, {"api.example.com": True}))
    reader = CacheReader(STORE, cache_directory=cache_dir.directory, fallback_file=str(fallback))
    assert reader.verdict("gw.example", FP_DER, now=NOW) is Verdict.TRUSTED  # the names do work
    assert reader.verdict("unlisted.example", FP2, now=NOW) is Verdict.TRUSTED  # exempt
    for common_name in ("gw.example", "unlisted.example", "", None):
        questions = [reader.verdict("", FP_DER, 0, NOW, common_name=common_name),
                     reader.verdict_for_certificate("", DER, NOW, common_name=common_name),
                     reader.verdict_for_verified_chain("", [DER], NOW, common_name=common_name),
                     reader.verdict_for_verified_digests("", [FP_DER], NOW, common_name=common_name)]
        assert questions == [Verdict.UNTRUSTED] * 4, common_name
        assert not reader.admits("", common_name=common_name)


def test_an_empty_common_name_names_nothing(cache_dir):
    # Pinned under the empty name and expected as the empty name: a leaf whose CN is empty
    # neither matches those pins nor gets past the expected names.
    cache_dir(pin("", base64.b64encode(FP_DER).decode()), pin("api.example.com", B64[FP1]))
    reader = CacheReader(STORE, cache_directory=cache_dir.directory, expected_common_names=["", "api.example.com"])
    assert reader.verdict("api.example.com", FP_DER, now=NOW, common_name="") is Verdict.UNTRUSTED
    only_empty = CacheReader(STORE, cache_directory=cache_dir.directory, expected_common_names=[""])
    assert not only_empty.admits("www.example.com", common_name="")
    assert only_empty.verdict("www.example.com", FP_DER, now=NOW, common_name="") is Verdict.UNTRUSTED


def test_refused_spellings_are_never_looked_up(cache_dir):
    # Listed under the spelling itself and exempt by domainsConfig: still untrusted, and not admitted.
    cache_dir(pin("127.000.000.001", B64[FP1]), pin("fe80::1%eth0", B64[FP1]), mode="challenge",
              domains_config=domains_config(False, {"127.000.000.001": False}))
    reader = CacheReader(STORE, cache_directory=cache_dir.directory)
    for spelling in ("127.000.000.001", "fe80::1%eth0", "api..example.com", "api\u3002example.com"):
        assert reader.verdict(spelling, FP1, now=NOW) is Verdict.UNTRUSTED, spelling
        assert not reader.admits(spelling)
    assert reader.verdict("unlisted.example", FP2, now=NOW) is Verdict.TRUSTED  # the exemption does work


def test_an_empty_host_is_untrusted_even_without_pins_or_with_expected_names(tmp_path):
    assert CacheReader(STORE, cache_directory=str(tmp_path)).verdict("", FP1, now=NOW) is Verdict.UNTRUSTED  # not empty
    (tmp_path / f"{STORE}.json").write_text(json.dumps(cache_document([pin("gw.example", B64[FP1])])))
    reader = CacheReader(STORE, cache_directory=str(tmp_path), expected_common_names=["gw.example"])
    assert reader.admits("www.example.com", common_name="gw.example")
    assert not reader.admits("", common_name="gw.example")
    assert reader.verdict("", FP1, now=NOW, common_name="gw.example") is Verdict.UNTRUSTED


# Messages

SWIFT_LOG_TEXT_ESCAPES = [  # Sources/PinKeeperDaemon/Logging/LogText.swift, needsEscape
    (0x00, 0x1F), (0x5C, 0x5C), (0x7F, 0x9F),  # C0, backslash, DEL and C1
    (0x2028, 0x2029),  # line and paragraph separators
    (0x061C, 0x061C), (0x200E, 0x200F), (0x202A, 0x202E), (0x2066, 0x2069),  # bidi marks and overrides
]


def test_messages_escape_exactly_what_the_swift_log_text_escapes():
    from pinkeeper.validation import escaped
    expected = sorted(code for low, high in SWIFT_LOG_TEXT_ESCAPES for code in range(low, high + 1))
    assert [code for code in range(0x110000) if escaped(chr(code)) != chr(code)] == expected
    short = {"\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t"}
    for code in expected:
        assert escaped(chr(code)) == short.get(chr(code), f"\\u{{{code:x}}}")
    assert escaped("pay\u200f.example\u061c") == "pay\\u{200f}.example\\u{61c}"
