"""`python3 -m pinkeeper validate`: verdicts, exit statuses and usage errors, and agreement with
the Swift `pinkeeper validate` on the same files."""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import STORE, cache_document, pin

SOURCE = Path(__file__).resolve().parents[1] / "src"
REPOSITORY = Path(__file__).resolve().parents[3]
NAME = "api.example.com"


def python_cli(*arguments):
    environment = dict(os.environ, PYTHONPATH=str(SOURCE))
    return subprocess.run([sys.executable, "-m", "pinkeeper", *arguments], capture_output=True, text=True,
                          env=environment, timeout=60)


def swift_binary():
    """$PINKEEPER_BINARY (make test-python sets it: then it must exist), else a debug build if any."""
    given = os.environ.get("PINKEEPER_BINARY")
    if given:
        assert os.access(given, os.X_OK), f"PINKEEPER_BINARY={given} is not an executable"
        return given
    candidate = str(REPOSITORY / ".build" / "debug" / "pinkeeper")
    return candidate if os.access(candidate, os.X_OK) else None


@pytest.fixture
def setup(tmp_path, pki):
    """A cache directory with the store, and the store's pins pointing at the test PKI."""
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / f"{STORE}.json").write_text(json.dumps(cache_document([
        pin(NAME, pki.pinned.fingerprint),
        pin(NAME, pki.intermediate.fingerprint, depth=1),
        pin("old.example.com", pki.pinned.fingerprint, expires=1000),
        pin("localhost", pki.unpinned.fingerprint),  # the test leaves' common name (N)
    ])))
    (tmp_path / "leaf.pem").write_bytes(pki.pinned.pem)
    (tmp_path / "unpinned.pem").write_bytes(pki.unpinned.pem)
    (tmp_path / "wrong.pem").write_bytes(pki.wrong_name.pem)
    (tmp_path / "not-a-certificate.der").write_bytes(bytes([0x30, 0x03, 0x02, 0x01, 0x00]))
    (tmp_path / "chain.pem").write_bytes(pki.unpinned.pem + pki.intermediate.pem)
    (tmp_path / "leaf.der").write_bytes(pki.pinned.der)
    (tmp_path / "chain.der").write_bytes(pki.unpinned.der + pki.intermediate.der)
    (tmp_path / "garbage.pem").write_bytes(b"this is not a certificate\n")
    (tmp_path / "fallback.json").write_text(json.dumps({"fingerprints": [pin("fb.example.com", pki.unpinned.fingerprint)]}))
    return tmp_path


def common(setup):
    return ["--cache-directory", str(setup / "cache"), "--store", STORE]


def test_trusted_untrusted_empty(setup, pki):
    trusted = python_cli("validate", *common(setup), "--name", NAME, "--fingerprint", pki.pinned.fingerprint)
    assert (trusted.returncode, trusted.stdout) == (0, "trusted\n")
    untrusted = python_cli("validate", *common(setup), "--name", NAME, "--fingerprint", pki.unpinned.fingerprint)
    assert (untrusted.returncode, untrusted.stdout) == (1, f"untrusted: store '{STORE}' pins '{NAME}', but not this certificate\n")
    empty = python_cli("validate", *common(setup), "--name", "old.example.com", "--fingerprint", pki.pinned.fingerprint)
    assert empty.returncode == 2
    assert empty.stdout == f"empty: store '{STORE}' has no valid pin for 'old.example.com'; reject, and run `pinkeeper update --store {STORE}`\n"


def test_hex_fingerprint_depth_and_certificates(setup, pki):
    hexadecimal = ":".join(f"{b:02X}" for b in base64.b64decode(pki.intermediate.fingerprint))
    assert python_cli("validate", *common(setup), "--name", NAME, "--fingerprint", hexadecimal, "--depth", "1").returncode == 0
    assert python_cli("validate", *common(setup), "--name", NAME, "--fingerprint", pki.intermediate.fingerprint).returncode == 1
    for file in ("leaf.pem", "leaf.der", "chain.pem", "chain.der"):  # the chains: the intermediate at depth 1
        result = python_cli("validate", *common(setup), "--name", NAME, "--certificate", str(setup / file))
        assert result.returncode == 0, (file, result.stdout, result.stderr)
        assert result.stdout.startswith("depth 0: sha256 ")


def test_with_a_certificate_the_leafs_common_name_is_consulted_too(setup, pki):
    # The unpinned leaf (CN localhost) is pinned under localhost only: --name api.example.com
    # and its CN both count, as for a TLS connection to api.example.com presenting it.
    result = python_cli("validate", *common(setup), "--name", NAME, "--certificate", str(setup / "unpinned.pem"))
    assert result.returncode == 0, (result.stdout, result.stderr)
    assert result.stdout.splitlines()[1:] == [
        f"note: the leaf's common name 'localhost' differs from --name '{NAME}': "
        "pins under either are compared, and pinning is skipped only if domainsConfig exempts both",
        "trusted"]
    # A bare fingerprint has no certificate and so no common name: only --name is consulted.
    alone = python_cli("validate", *common(setup), "--name", NAME, "--fingerprint", pki.unpinned.fingerprint)
    assert alone.returncode == 1
    # A leaf named as --name (ASCII case aside) needs no note.
    same = python_cli("validate", *common(setup), "--name", "LocalHost", "--certificate", str(setup / "unpinned.pem"))
    assert (same.returncode, same.stdout.splitlines()[1:]) == (0, ["trusted"])


def test_messages_name_the_host_and_a_differing_common_name(setup, pki):
    result = python_cli("validate", *common(setup), "--name", NAME, "--certificate", str(setup / "wrong.pem"))
    assert result.returncode == 1
    assert result.stdout.splitlines()[-1] == (f"untrusted: store '{STORE}' pins '{NAME}' (certificate common name "
                                              "'wrong.example.com'), but not this certificate")
    result = python_cli("validate", *common(setup), "--expected-common-name", "www.example.com",
                        "--name", NAME, "--certificate", str(setup / "wrong.pem"))
    assert result.stdout.splitlines()[-1] == (f"untrusted: '{NAME}' (certificate common name 'wrong.example.com') "
                                              f"is not among the expected_common_names of store '{STORE}'")


def test_names_ignore_ascii_case_only(setup, pki):
    assert python_cli("validate", *common(setup), "--name", "API.Example.COM",
                      "--fingerprint", pki.pinned.fingerprint).returncode == 0
    # U+017F LATIN SMALL LETTER LONG S is not "s", whatever casefold() says.
    long_s = python_cli("validate", *common(setup), "--name", "localho\u017ft", "--fingerprint", pki.unpinned.fingerprint)
    assert long_s.returncode == 2


def test_a_leaf_whose_subject_cannot_be_read_is_bad_data(setup):
    result = python_cli("validate", *common(setup), "--name", NAME, "--certificate", str(setup / "not-a-certificate.der"))
    assert result.returncode == 65, (result.stdout, result.stderr)


def test_fallback_and_expected_names(setup, pki):
    fallback = ["--fallback-file", str(setup / "fallback.json")]
    assert python_cli("validate", *common(setup), *fallback, "--name", "fb.example.com",
                      "--fingerprint", pki.unpinned.fingerprint).returncode == 0
    result = python_cli("validate", *common(setup), "--expected-common-name", "www.example.com",
                        "--name", NAME, "--fingerprint", pki.pinned.fingerprint)
    assert (result.returncode, result.stdout) == (1, f"untrusted: '{NAME}' is not among the expected_common_names of store '{STORE}'\n")


@pytest.mark.parametrize("arguments", [
    [],                                                          # no question
    ["--fingerprint", "AQ==", "--name", NAME],                   # not 32 bytes
    ["--name", NAME, "--fingerprint", "x", "--certificate", "y"],
    ["--name", NAME, "--certificate", "y", "--depth", "1"],      # depth goes with --fingerprint
    ["--name", NAME, "--fingerprint", "AQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQE=", "--depth", "-1"],
    ["--name", NAME, "--fingerprint", "AQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQE=", "--bogus"],
], ids=["no-question", "short-digest", "two-questions", "depth-without-fingerprint", "negative-depth", "unknown-option"])
def test_usage_errors_exit_64_not_2(setup, arguments):
    # argparse's own status 2 would read as `empty`.
    assert python_cli("validate", *common(setup), *arguments).returncode == 64


def test_an_empty_name_is_a_usage_error_as_in_swift(setup, pki):
    # Pinned under the leaf's CN and the bare "" alike: without a host nothing may decide.
    (setup / "cache" / f"{STORE}.json").write_text(json.dumps(cache_document([
        pin("", pki.pinned.fingerprint), pin("localhost", pki.pinned.fingerprint)])))
    for question in (["--fingerprint", pki.pinned.fingerprint], ["--certificate", str(setup / "leaf.pem")]):
        result = python_cli("validate", *common(setup), "--name", "", *question)
        assert (result.returncode, result.stdout) == (64, ""), (result.stdout, result.stderr)
        assert "Error: --name must be the host a client connects to, not empty" in result.stderr


def test_a_store_id_that_is_a_path_is_a_usage_error(setup, pki):
    result = python_cli("validate", "--cache-directory", str(setup / "cache"), "--store", "../cache/banking",
                        "--name", NAME, "--fingerprint", pki.pinned.fingerprint)
    assert result.returncode == 64


def test_file_errors(setup, pki):
    missing = python_cli("validate", *common(setup), "--name", NAME, "--certificate", str(setup / "nope.pem"))
    assert missing.returncode == 66 and "does not exist" in missing.stderr
    garbage = python_cli("validate", *common(setup), "--name", NAME, "--certificate", str(setup / "garbage.pem"))
    assert garbage.returncode == 65
    (setup / "cache" / f"{STORE}.json").write_text("not json{")
    invalid = python_cli("validate", *common(setup), "--name", NAME, "--fingerprint", pki.pinned.fingerprint)
    assert invalid.returncode == 65 and "is not a pinkeeper cache file" in invalid.stderr
    (setup / "cache" / f"{STORE}.json").unlink()
    (setup / "cache" / f"{STORE}.json").mkdir()
    unreadable = python_cli("validate", *common(setup), "--name", NAME, "--fingerprint", pki.pinned.fingerprint)
    assert unreadable.returncode == 74


# Agreement with the Swift binary (built by `make test` before the Python tests run).

COMPARED = {  # case: (arguments, the exit status both must give)
    "trusted": (["--name", NAME, "--fingerprint", "{pinned}"], 0),
    "untrusted": (["--name", NAME, "--fingerprint", "{unpinned}"], 1),
    "empty-expired": (["--name", "old.example.com", "--fingerprint", "{pinned}"], 2),
    "other-case": (["--name", "API.example.com", "--fingerprint", "{pinned}"], 0),  # ASCII case is ignored
    "depth-1": (["--name", NAME, "--fingerprint", "{intermediate}", "--depth", "1"], 0),
    "depth-mismatch": (["--name", NAME, "--fingerprint", "{pinned}", "--depth", "1"], 1),
    "pem-chain": (["--name", NAME, "--certificate", "{dir}/chain.pem"], 0),
    "der-leaf": (["--name", NAME, "--certificate", "{dir}/leaf.der"], 0),
    "common-name-pins": (["--name", NAME, "--certificate", "{dir}/unpinned.pem"], 0),  # pinned under its CN only
    "fingerprint-host-only": (["--name", NAME, "--fingerprint", "{unpinned}"], 1),
    "common-name-untrusted": (["--name", NAME, "--certificate", "{dir}/wrong.pem"], 1),
    "unexpected-name": (["--name", "www.example.com", "--fingerprint", "{pinned}"], 1),
    "missing-certificate": (["--name", NAME, "--certificate", "{dir}/nope.pem"], 66),
    "garbage-certificate": (["--name", NAME, "--certificate", "{dir}/garbage.pem"], 65),
    "usage-error": (["--name", NAME], 64),
    "empty-name": (["--name", "", "--fingerprint", "{pinned}"], 64),
    "empty-name-certificate": (["--name", "", "--certificate", "{dir}/leaf.pem"], 64),
    "bidi-marks-escaped": (["--name", "api\u200e.example\u061c.com\u200f", "--fingerprint", "{pinned}"], 1),
}


@pytest.mark.parametrize("case", COMPARED, ids=list(COMPARED))
def test_agrees_with_the_swift_pinkeeper_validate(case, setup, pki):
    binary = swift_binary()
    if binary is None:
        pytest.skip("no Swift pinkeeper binary (build it, or set PINKEEPER_BINARY)")
    values = {"pinned": pki.pinned.fingerprint, "unpinned": pki.unpinned.fingerprint,
              "intermediate": pki.intermediate.fingerprint, "dir": str(setup)}
    template, status = COMPARED[case]
    arguments = [a.format(**values) for a in template]
    expected_names = [NAME, "old.example.com", "API.example.com"]
    config = setup / "pinkeeper.toml"
    config.write_text(f'cache_directory = "{setup / "cache"}"\nstate_directory = "{setup / "state"}"\n'
                      f'[stores.{STORE}]\nurl = "https://pins.example.com/list"\n'
                      f'public_key = "BC3kV9OIDnMuVoCdDR9nEA/JidJLTTDLuSA2TSZsGgODSshfbZg31MS90WC/HdbU/A5WL5GmyDkE/iks6INv+XE="\n'
                      f'expected_common_names = {json.dumps(expected_names)}\n')
    swift = subprocess.run([binary, "validate", "--config", str(config), "--store", STORE, *arguments],
                           capture_output=True, text=True, timeout=60)
    python = python_cli("validate", *common(setup), *[f"--expected-common-name={n}" for n in expected_names], *arguments)
    assert (swift.returncode, python.returncode) == (status, status), (swift.stdout, swift.stderr, python.stdout, python.stderr)
    # The verdict line and the note on a leaf's differing common name are the same; Swift's
    # --certificate lines also show subject and expiry.
    last = lambda text: text.strip().splitlines()[-1] if text.strip() else ""
    notes = lambda text: [line for line in text.splitlines() if line.startswith("note: ")]
    if swift.returncode in (0, 1, 2):
        assert last(python.stdout) == last(swift.stdout)
        assert notes(python.stdout) == notes(swift.stdout)
