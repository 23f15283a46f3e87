"""`python3 -m pinkeeper validate`: verdicts, messages, exit statuses and usage errors beyond the
conformance table (which test_conformance_commands.py plays through this command line; a shared
harness compares every reader's command line with the Swift `pinkeeper validate`)."""

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
NAME = "api.example.com"


def python_cli(*arguments):
    environment = dict(os.environ, PYTHONPATH=str(SOURCE))
    return subprocess.run([sys.executable, "-m", "pinkeeper", *arguments], capture_output=True, text=True,
                          env=environment, timeout=60)


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
    assert empty.stdout == (f"empty: store '{STORE}' has no valid pin for 'old.example.com'; reject, and run "
                            f"`pinkeeper update --store {STORE}`\n")


def test_hex_fingerprint_depth_and_certificates(setup, pki):
    hexadecimal = ":".join(f"{b:02X}" for b in base64.b64decode(pki.intermediate.fingerprint))
    assert python_cli("validate", *common(setup), "--name", NAME, "--fingerprint", hexadecimal, "--depth", "1").returncode == 0
    assert python_cli("validate", *common(setup), "--name", NAME, "--fingerprint", pki.intermediate.fingerprint).returncode == 1
    for file in ("leaf.pem", "leaf.der", "chain.pem", "chain.der"):  # the chains: the intermediate at depth 1
        result = python_cli("validate", *common(setup), "--name", NAME, "--certificate", str(setup / file))
        assert result.returncode == 0, (file, result.stdout, result.stderr)
        # The verdict first, then the digests at their depths.
        leaf = pki.pinned if file.startswith("leaf") else pki.unpinned
        assert result.stdout.splitlines()[:2] == ["trusted", f"depth 0: sha256 {leaf.fingerprint}"]


def test_with_a_certificate_the_leafs_common_name_is_consulted_too(setup, pki):
    # The unpinned leaf (CN localhost) is pinned under localhost only: --name api.example.com
    # and its CN both count, as for a TLS connection to api.example.com presenting it.
    result = python_cli("validate", *common(setup), "--name", NAME, "--certificate", str(setup / "unpinned.pem"))
    assert result.returncode == 0, (result.stdout, result.stderr)
    assert result.stdout.splitlines() == [
        "trusted", f"depth 0: sha256 {pki.unpinned.fingerprint}",
        f"note: the leaf's common name 'localhost' differs from --name '{NAME}': "
        "pins under either are compared, and pinning is skipped only if domainsConfig exempts both"]
    # A bare fingerprint has no certificate and so no common name: only --name is consulted.
    alone = python_cli("validate", *common(setup), "--name", NAME, "--fingerprint", pki.unpinned.fingerprint)
    assert alone.returncode == 1
    # A leaf named as --name (ASCII case aside) needs no note.
    same = python_cli("validate", *common(setup), "--name", "LocalHost", "--certificate", str(setup / "unpinned.pem"))
    assert (same.returncode, same.stdout.splitlines()) == (0, ["trusted", f"depth 0: sha256 {pki.unpinned.fingerprint}"])


def test_messages_name_the_host_and_a_differing_common_name(setup, pki):
    result = python_cli("validate", *common(setup), "--name", NAME, "--certificate", str(setup / "wrong.pem"))
    assert result.returncode == 1
    assert result.stdout.splitlines()[0] == (f"untrusted: store '{STORE}' pins '{NAME}' (certificate common name "
                                             "'wrong.example.com'), but not this certificate")
    result = python_cli("validate", *common(setup), "--expected-common-name", "www.example.com",
                        "--name", NAME, "--certificate", str(setup / "wrong.pem"))
    assert result.stdout.splitlines()[0] == (f"untrusted: '{NAME}' (certificate common name 'wrong.example.com') "
                                             f"is not among the expected_common_names of store '{STORE}'")


def test_names_ignore_ascii_case_only(setup, pki):
    assert python_cli("validate", *common(setup), "--name", "API.Example.COM",
                      "--fingerprint", pki.pinned.fingerprint).returncode == 0
    # The messages show the host in its one form: what the pins were looked up under.
    result = python_cli("validate", *common(setup), "--name", "API.Example.COM.", "--fingerprint", pki.unpinned.fingerprint)
    assert (result.returncode, result.stdout) == (1, f"untrusted: store '{STORE}' pins '{NAME}', but not this certificate\n")
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
    ["--name", NAME, "--fingerprint", "AQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQE=", "--dep", "0"],
    ["--name", NAME, "--cert", "y"],
], ids=["no-question", "short-digest", "two-questions", "depth-with-certificate", "abbreviated-depth",
        "abbreviated-certificate"])
def test_usage_errors_exit_64_not_2(setup, arguments):
    # argparse's own status 2 would read as `empty`; an abbreviated option is not one.
    result = python_cli("validate", *common(setup), *arguments)
    assert (result.returncode, result.stdout) == (64, ""), result.stderr
    assert result.stderr.startswith("pinkeeper: usage: "), result.stderr


def test_an_empty_name_is_a_usage_error_as_in_swift(setup, pki):
    # Pinned under the leaf's CN and the bare "" alike: without a host nothing may decide.
    (setup / "cache" / f"{STORE}.json").write_text(json.dumps(cache_document([
        pin("", pki.pinned.fingerprint), pin("localhost", pki.pinned.fingerprint)])))
    for question in (["--fingerprint", pki.pinned.fingerprint], ["--certificate", str(setup / "leaf.pem")]):
        result = python_cli("validate", *common(setup), "--name", "", *question)
        assert (result.returncode, result.stdout) == (64, ""), (result.stdout, result.stderr)
        assert result.stderr.startswith("pinkeeper: usage: --name must be the host a client connects to, not empty")


def test_a_refused_spelling_is_untrusted_and_says_why(setup, pki):
    # Pinned under the address itself: 127.000.000.001 still has no one form, so nothing is looked up.
    (setup / "cache" / f"{STORE}.json").write_text(json.dumps(cache_document([
        pin("127.0.0.1", pki.pinned.fingerprint), pin("127.000.000.001", pki.pinned.fingerprint)])))
    result = python_cli("validate", *common(setup), "--name", "127.000.000.001", "--fingerprint", pki.pinned.fingerprint)
    assert result.returncode == 1
    assert result.stdout.startswith("untrusted: '127.000.000.001' has no one spelling"), result.stdout
    assert f"store '{STORE}'" in result.stdout and "give its canonical form" in result.stdout
    # Another spelling of the same address is that address.
    assert python_cli("validate", *common(setup), "--name", "[::ffff:7f00:1]", "--fingerprint",
                      pki.pinned.fingerprint).returncode == 2
    assert python_cli("validate", *common(setup), "--name", "127.0.0.1", "--fingerprint",
                      pki.pinned.fingerprint).returncode == 0


def test_a_store_id_that_is_a_path_is_a_usage_error(setup, pki):
    result = python_cli("validate", "--cache-directory", str(setup / "cache"), "--store", "../cache/banking",
                        "--name", NAME, "--fingerprint", pki.pinned.fingerprint)
    assert result.returncode == 64


def test_file_errors(setup, pki):
    missing = python_cli("validate", *common(setup), "--name", NAME, "--certificate", str(setup / "nope.pem"))
    assert missing.returncode == 66 and "does not exist" in missing.stderr
    garbage = python_cli("validate", *common(setup), "--name", NAME, "--certificate", str(setup / "garbage.pem"))
    assert garbage.returncode == 65
    cache = setup / "cache" / f"{STORE}.json"
    cache.write_text("not json{")
    invalid = python_cli("validate", *common(setup), "--name", NAME, "--fingerprint", pki.pinned.fingerprint)
    assert (invalid.returncode, invalid.stdout) == (65, "")
    assert invalid.stderr.startswith(f"pinkeeper: not-json: store '{STORE}': {cache} cannot be used: not valid JSON")
    assert f"pinkeeper update --store {STORE}" in invalid.stderr
    cache.unlink()
    cache.mkdir()
    unreadable = python_cli("validate", *common(setup), "--name", NAME, "--fingerprint", pki.pinned.fingerprint)
    assert unreadable.returncode == 74
    assert unreadable.stderr.startswith(f"pinkeeper: not-regular-file: store '{STORE}': {cache} is not a regular file")


def test_an_insecure_fallback_file_names_the_store_the_file_and_the_fix(setup, pki):
    fallback = setup / "fallback.json"
    fallback.chmod(0o646)
    result = python_cli("validate", *common(setup), "--fallback-file", str(fallback), "--name", NAME,
                        "--fingerprint", pki.pinned.fingerprint)
    assert (result.returncode, result.stdout) == (74, "")
    assert result.stderr == (f"pinkeeper: insecure-permissions: store '{STORE}': {fallback} is writable by other users "
                             "(mode 0646), who could plant pins in it: refused until they cannot write it (chmod o-w)\n")


def test_a_name_that_is_not_utf8_is_untrusted_and_printed_escaped(setup, pki):
    # The bytes reach Python as surrogates: no one form (never looked up), and escaped when printed.
    result = python_cli("validate", *common(setup), "--name", os.fsdecode(b"api\xff.example.com"),
                        "--fingerprint", pki.pinned.fingerprint)
    assert result.returncode == 1, result.stderr
    assert result.stdout.startswith("untrusted: 'api\\udcff.example.com' has no one spelling"), result.stdout


def test_one_empty_expected_name_admits_nothing(setup, pki):
    result = python_cli("validate", *common(setup), "--expected-common-name=", "--name", NAME,
                        "--fingerprint", pki.pinned.fingerprint)
    assert (result.returncode, result.stdout) == (1, f"untrusted: '{NAME}' is not among the expected_common_names "
                                                     f"of store '{STORE}'\n")


def test_help_says_pins_of_a_removed_key_still_count_and_they_do(tmp_path, pki):
    # The file names the key that verified each pin, not the keys still configured: a pin of a key
    # the operator has since removed decides here until the daemon rewrites the file without it.
    cache = tmp_path / "cache"
    cache.mkdir()
    kept, removed = pin(NAME, pki.pinned.fingerprint), pin(NAME, pki.unpinned.fingerprint)
    kept["key"], removed["key"] = "3f1c0c6a9b2e4d71", "0123456789abcdef"
    (cache / f"{STORE}.json").write_text(json.dumps(cache_document([kept, removed])))
    for entry in (kept, removed):
        answer = python_cli("validate", "--cache-directory", str(cache), "--store", STORE, "--name", NAME,
                            "--fingerprint", entry["fingerprint"])
        assert (answer.returncode, answer.stdout) == (0, "trusted\n")
    shown = python_cli("validate", "--help")
    assert shown.returncode == 0, shown.stderr
    text = " ".join(shown.stdout.split())
    assert "Reads no configuration: after a signing key is removed from the daemon's configuration, its pins and its " \
           "domainsConfig still decide here until the daemon drops them from the file" in text, text
    assert "`pinkeeper validate` without --cache-directory counts only what the configured keys vouch for" in text, text
