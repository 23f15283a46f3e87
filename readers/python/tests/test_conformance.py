"""The shared conformance table (Tests/Conformance/cases.json), all of it, answered by the Python
reader through real files in a temporary directory: every case's verdict, the error an explicit
re-read reports (or that opening the reader reports), every host spelling, and the error codes."""

import base64
import os
import ssl

import pytest

from pinkeeper import ERROR_KINDS, CacheReader, CacheReaderError, canonical_host
from pinkeeper.cli import EXIT_STATUS

from conformance_files import STORE, case_directory, file_content, load_cases, load_document, mode_of, replace, \
    write_fallback

CASES = load_cases()


def ask(reader: CacheReader, case) -> str:
    # `name` is H as the client handed it over; `common_name`, when given, is N, the leaf's CN.
    question, now = case["question"], case["now"]
    host, common_name = question["name"], question.get("common_name")
    if "fingerprint" in question:
        digest = base64.b64decode(question["fingerprint"])
        return reader.verdict(host, digest, question.get("depth", 0), now=now, common_name=common_name).value
    if "verified_chain" in question:
        digests = [base64.b64decode(f) for f in question["verified_chain"]]
        return reader.verdict_for_verified_digests(host, digests, now=now, common_name=common_name).value
    der = ssl.PEM_cert_to_DER_cert(question["certificate_pem"])
    return reader.verdict_for_certificate(host, der, now=now, common_name=common_name).value


def open_reader(directory, fallback, case) -> CacheReader:
    return CacheReader(STORE, cache_directory=str(directory), fallback_file=fallback,
                       expected_common_names=case.get("expected_common_names"))


@pytest.mark.parametrize("case", CASES, ids=lambda case: case["id"])
def test_conformance_case(case, tmp_path):
    directory = case_directory(tmp_path, case)
    fallback = write_fallback(directory, case)
    cache, current = directory / f"{STORE}.json", file_content(case)
    if case["expected"] == "error":
        # The reader cannot be opened at all: its fallback file is refused.
        with pytest.raises(CacheReaderError) as raised:
            open_reader(directory, fallback, case)
        assert raised.value.code == case["expected_error"], (case["rule"], str(raised.value))
        return
    if "previous_cache" in case:
        replace(cache, file_content({"cache": case["previous_cache"]}))
        if case.get("previous_cache_linked"):
            os.link(cache, directory / f"{STORE}-backup.json")
        reader = open_reader(directory, fallback, case)
        ask(reader, case)  # the previous version is read and answers
        if current is None:
            cache.unlink()
        else:
            replace(cache, current, mode_of(case, "cache_mode", 0o644))
    else:
        # Opened before the file exists, so that an invalid first version is a refused update
        # (kept out, `problem` set) rather than an error from the constructor.
        reader = open_reader(directory, fallback, case)
        if current is not None:
            replace(cache, current, mode_of(case, "cache_mode", 0o644))
    assert ask(reader, case) == case["expected"], case["rule"]
    # An explicit re-read of the last version reports the case's error, or nothing.
    if "expected_error" in case:
        with pytest.raises(CacheReaderError) as raised:
            reader.refresh()
        assert raised.value.code == case["expected_error"], (case["rule"], str(raised.value))
        assert reader.problem is raised.value
    else:
        reader.refresh()
        assert reader.problem is None


@pytest.mark.parametrize("row", load_document()["host_spellings"], ids=lambda row: row["id"])
def test_host_spelling(row):
    assert canonical_host(row["spelling"]) == row["host"]
    if row["host"] is not None:
        assert canonical_host(row["host"]) == row["host"]  # the one form is its own one form


def test_the_error_codes_are_the_tables():
    table = load_document()["error_codes"]
    assert ERROR_KINDS == {code: entry["kind"] for code, entry in table.items()}
    assert {code: EXIT_STATUS[kind] for code, kind in ERROR_KINDS.items()} == \
        {code: entry["status"] for code, entry in table.items()}


def test_the_table_covers_every_question_kind_and_file_rule():
    kinds = {next(k for k in ("fingerprint", "verified_chain", "certificate_pem") if k in c["question"]) for c in CASES}
    assert kinds == {"fingerprint", "verified_chain", "certificate_pem"}
    # Both kinds of question: by the host alone, and by the host with the leaf's common name.
    assert {"common_name" in c["question"] for c in CASES} == {True, False}
    members = {member for case in CASES for member in case}
    assert {"cache_mode", "directory_mode", "fallback_mode", "fallback_missing", "previous_cache",
            "previous_cache_linked"} <= members
    assert {case["expected"] for case in CASES} == {"trusted", "untrusted", "empty", "error"}


def test_an_invalid_first_version_is_an_error_from_the_constructor(tmp_path):
    (tmp_path / f"{STORE}.json").write_text("not json{")
    with pytest.raises(CacheReaderError) as raised:
        CacheReader(STORE, cache_directory=str(tmp_path))
    assert (raised.value.code, raised.value.kind) == ("not-json", "invalid")
