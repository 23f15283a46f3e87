"""The shared conformance table (Tests/Conformance/cases.json), answered by the Python reader
through real files in a temporary directory."""

import base64
import json
import os
import ssl
from pathlib import Path

import pytest

from pinkeeper import CacheReader, CacheReaderError

CASES_FILE = Path(__file__).resolve().parents[3] / "Tests" / "Conformance" / "cases.json"
STORE = "banking"


def load_cases():
    document = json.loads(CASES_FILE.read_text(encoding="utf-8"))
    assert document["format"] == 1
    return document["cases"]


def replace(path: Path, content: bytes) -> None:
    """As the daemon does: a temporary file renamed over the cache file (a new inode)."""
    temporary = path.with_name(f".{path.name}.tmp")
    temporary.write_bytes(content)
    os.rename(temporary, path)


def file_content(case):
    if "cache" in case:
        return json.dumps(case["cache"]).encode()
    if "cache_text" in case:
        return case["cache_text"].encode()
    if "cache_base64" in case:
        return base64.b64decode(case["cache_base64"], validate=True)
    return None


def ask(reader: CacheReader, case) -> str:
    # `name` is H, the verified host; `common_name`, when given, is N, the leaf's CN.
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


def open_reader(directory: Path, case) -> CacheReader:
    fallback = None
    if "fallback" in case:
        fallback = directory / "fallback.json"
        fallback.write_text(json.dumps(case["fallback"]))
    return CacheReader(STORE, cache_directory=str(directory), fallback_file=fallback and str(fallback),
                       expected_common_names=case.get("expected_common_names"))


@pytest.mark.parametrize("case", load_cases(), ids=lambda case: case["id"])
def test_conformance_case(case, tmp_path):
    cache = tmp_path / f"{STORE}.json"
    current = file_content(case)
    if "previous_cache" in case:
        replace(cache, json.dumps(case["previous_cache"]).encode())
        reader = open_reader(tmp_path, case)
        ask(reader, case)  # the previous version is read and answers
        if current is None:
            cache.unlink()
        else:
            replace(cache, current)
    else:
        # Opened before the file exists, so that an invalid first version is a refused update
        # (kept out, `problem` set) rather than an error from the constructor.
        reader = open_reader(tmp_path, case)
        if current is not None:
            replace(cache, current)
    assert ask(reader, case) == case["expected"], case["rule"]


def test_the_table_covers_every_question_kind():
    kinds = {next(k for k in ("fingerprint", "verified_chain", "certificate_pem") if k in c["question"]) for c in load_cases()}
    assert kinds == {"fingerprint", "verified_chain", "certificate_pem"}
    # Both kinds of question: by the host alone, and by the host with the leaf's common name.
    assert {"common_name" in c["question"] for c in load_cases()} == {True, False}


def test_an_invalid_first_version_is_an_error_from_the_constructor(tmp_path):
    (tmp_path / f"{STORE}.json").write_text("not json{")
    with pytest.raises(CacheReaderError) as raised:
        CacheReader(STORE, cache_directory=str(tmp_path))
    assert raised.value.kind == "invalid"
