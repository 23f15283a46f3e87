"""The conformance table through this reader's command line (`python3 -m pinkeeper validate`): every
`options` row and every case's `expected_command`, each a real process reading the case's last
files at the case's time. The command has no option for the time: faketime freezes the clock of
the process instead (Debian's faketime; scripts/install-deps.sh installs it)."""

from __future__ import annotations

import base64
import datetime
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from conformance_files import STORE, case_directory, file_content, load_cases, load_document, mode_of, replace, \
    write_fallback

SOURCE = Path(__file__).resolve().parents[1] / "src"
DOCUMENT = load_document()


def validate_at(now: int, arguments) -> subprocess.CompletedProcess:
    """`python3 -m pinkeeper validate ARGUMENTS` with the clock frozen at `now`."""
    faketime = shutil.which("faketime")
    assert faketime, "faketime is missing (Debian's faketime; scripts/install-deps.sh installs it)"
    environment = dict(os.environ, PYTHONPATH=str(SOURCE), FAKETIME_FMT="%s")
    command = [faketime, "-f", str(now), sys.executable, "-m", "pinkeeper", "validate", *arguments]
    for attempt in range(3):
        result = subprocess.run(command, capture_output=True, text=True, env=environment, timeout=120)
        # The wrapper names a semaphore after its own PID and stops (status 1, the command not
        # run) when a wrapper that died uncleanly had that PID; the next one has another PID.
        if not (result.returncode == 1 and not result.stdout and "sem_open" in result.stderr):
            return result
    return result


def outcome(result: subprocess.CompletedProcess) -> dict:
    """{"status", "word"} as the table's README defines them: for statuses 0-2 the first word of
    standard output (ended by a space, `:` or the line's end), else the word after `pinkeeper: `
    on standard error's first line."""
    if result.returncode in (0, 1, 2):
        word = re.match(r"[^\s:]*", result.stdout).group()
    else:
        first = (result.stderr.splitlines() or [""])[0]
        found = re.match(r"pinkeeper: ([^\s:]*)", first)
        word = found.group(1) if found else f"(no 'pinkeeper: ' on standard error: {first!r})"
    return {"status": result.returncode, "word": word}


def certificate(common_name, key) -> bytes:
    """A self-signed DER certificate with the given common name (none when None): only its
    digest and its common name are looked at."""
    attributes = [x509.NameAttribute(NameOID.ORGANIZATION_NAME, "pinkeeper conformance")]
    if common_name is not None:
        attributes.append(x509.NameAttribute(NameOID.COMMON_NAME, common_name))
    name = x509.Name(attributes)
    start = datetime.datetime(2025, 1, 1, tzinfo=datetime.timezone.utc)
    built = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
             .serial_number(x509.random_serial_number()).not_valid_before(start)
             .not_valid_after(start + datetime.timedelta(days=3650)).sign(key, hashes.SHA256()))
    return built.public_bytes(serialization.Encoding.DER)


def certificate_question(question, directory: Path):
    """The --certificate file standing for the case's verified chain (or its one fingerprint with
    a common name), and how each of the case's made-up fingerprints becomes a real certificate's."""
    if "certificate_pem" in question:
        assert "common_name" not in question, "a PEM question with another common name cannot be played"
        path = directory / "question.pem"
        path.write_text(question["certificate_pem"])
        return path, {}
    if "verified_chain" in question:
        chain = question["verified_chain"]
    else:
        assert question.get("depth", 0) == 0, "only a leaf fingerprint can stand with a common name"
        chain = [question["fingerprint"]]
    key, made = ec.generate_private_key(ec.SECP256R1()), {}
    for position, fingerprint in enumerate(chain):
        if fingerprint not in made:
            # The leaf carries the case's common name (N); without one, none, so H alone decides.
            made[fingerprint] = certificate(question.get("common_name") if position == 0 else "chain member", key)
    path = directory / "question.der"
    path.write_bytes(b"".join(made[fingerprint] for fingerprint in chain))
    return path, {fingerprint: base64.b64encode(hashlib.sha256(der).digest()).decode() for fingerprint, der in made.items()}


def case_arguments(case, tmp_path: Path):
    """Writes the case's last files (its cache version, its fallback) and returns the arguments."""
    directory = case_directory(tmp_path, case)
    question = case["question"]
    arguments = ["--cache-directory", str(directory), "--store", STORE, "--name", question["name"]]
    replaced = {}
    if "fingerprint" in question and "common_name" not in question:
        arguments += ["--fingerprint", question["fingerprint"]]
        if "depth" in question:
            arguments += ["--depth", str(question["depth"])]
    else:
        path, replaced = certificate_question(question, tmp_path)
        arguments += ["--certificate", str(path)]
    content, fallback = file_content(case), None
    for made_up, real in replaced.items():
        content = content and content.replace(made_up.encode(), real.encode())
    if "fallback" in case:
        fallback = json.dumps(case["fallback"])
        for made_up, real in replaced.items():
            fallback = fallback.replace(made_up, real)
    fallback_path = write_fallback(directory, case, fallback and fallback.encode())
    if fallback_path:
        arguments += ["--fallback-file", fallback_path]
    if content is not None:
        replace(directory / f"{STORE}.json", content, mode_of(case, "cache_mode", 0o644))
    names = case.get("expected_common_names")
    if names is not None:
        arguments += [f"--expected-common-name={name}" for name in names] or ["--expected-common-name="]
    return arguments


@pytest.mark.parametrize("case", load_cases(), ids=lambda case: case["id"])
def test_case_through_the_command_line(case, tmp_path):
    result = validate_at(case["now"], case_arguments(case, tmp_path))
    assert outcome(result) == case["expected_command"], (case["rule"], result.stdout, result.stderr)


@pytest.mark.parametrize("row", DOCUMENT["options"], ids=lambda row: row["id"])
def test_options_row(row, tmp_path):
    cache = DOCUMENT["options_cache"]
    (tmp_path / f"{cache['store']}.json").write_text(json.dumps(cache["cache"]))
    result = validate_at(cache["now"], ["--cache-directory", str(tmp_path), "--store", cache["store"], *row["args"]])
    assert outcome(result) == row["expected_command"], (result.stdout, result.stderr)


def test_the_word_is_read_as_the_readme_says():
    def completed(status, stdout="", stderr=""):
        return subprocess.CompletedProcess([], status, stdout, stderr)
    assert outcome(completed(0, "trusted\n")) == {"status": 0, "word": "trusted"}
    assert outcome(completed(1, "untrusted: store 'b' pins ...\n")) == {"status": 1, "word": "untrusted"}
    assert outcome(completed(2, "empty: ...\ndepth 0: ...\n")) == {"status": 2, "word": "empty"}
    assert outcome(completed(74, "", "pinkeeper: insecure-permissions: store ...\n")) == \
        {"status": 74, "word": "insecure-permissions"}
    assert outcome(completed(64, "", "pinkeeper: usage: --depth ...\nusage: ...\n")) == {"status": 64, "word": "usage"}
    assert outcome(completed(64, "", "Error: ...\n"))["word"].startswith("(no 'pinkeeper: '")
