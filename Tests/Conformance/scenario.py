"""What one `validate` question needs on disk, made from a case of cases.json, and written out.

A command reads the cache once, so a case is played on its last version (none when a
previous_cache is deleted). Questions the options cannot ask directly become certificate files:
a `common_name` or `verified_chain` question is a chain of certificates made here, the leaf
with that common name, each one's fingerprint replacing the case's at its position in the
files; `certificate_pem` is written as it is. The README's "How a runner plays a case" says how
the files are written.
"""

from __future__ import annotations

import base64
import datetime
import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

STORE = "banking"
# One key signs every certificate: their fingerprints differ by serial number and name.
_KEY = ec.generate_private_key(ec.SECP256R1())


@dataclass
class Scenario:
    """The files and the question of one command-line run."""
    name: str
    question: list[str]  # --fingerprint B64 [--depth N] | --certificate FILE
    now: int
    cache: bytes | None = None
    cache_mode: int = 0o644
    directory_mode: int = 0o755
    fallback: bytes | None = None
    fallback_mode: int = 0o644
    fallback_missing: bool = False
    expected_common_names: list[str] | None = None
    extra_args: list[str] = field(default_factory=list)  # an options row's own arguments


def certificate(common_name: str | None, now: int) -> bytes:
    """A self-signed certificate (DER) named common_name, valid around now. Without a common name its
    subject is an organisation only: still no CN, but not the empty name Java's parser refuses."""
    attribute = (x509.NameAttribute(NameOID.COMMON_NAME, common_name) if common_name is not None
                 else x509.NameAttribute(NameOID.ORGANIZATION_NAME, "pinkeeper conformance chain"))
    subject = x509.Name([attribute])
    moment = datetime.datetime.fromtimestamp(now, datetime.timezone.utc)
    built = (x509.CertificateBuilder().subject_name(subject).issuer_name(subject).public_key(_KEY.public_key())
             .serial_number(x509.random_serial_number()).not_valid_before(moment - datetime.timedelta(days=30))
             .not_valid_after(moment + datetime.timedelta(days=365)).sign(_KEY, hashes.SHA256()))
    return built.public_bytes(serialization.Encoding.DER)


def fingerprint(der: bytes) -> str:
    return base64.b64encode(hashlib.sha256(der).digest()).decode("ascii")


def pem(der: bytes) -> bytes:
    return x509.load_der_x509_certificate(der).public_bytes(serialization.Encoding.PEM)


def last_version(case: dict) -> bytes | None:
    """The bytes of the case's last cache file; None when there is none (or it was deleted)."""
    if "cache" in case:
        return json.dumps(case["cache"], ensure_ascii=False).encode("utf-8")
    if "cache_text" in case:
        return case["cache_text"].encode("utf-8", "surrogatepass")
    if "cache_base64" in case:
        return base64.b64decode(case["cache_base64"])
    return None


def _chain_question(case: dict, files: dict[str, bytes | None], directory: Path) -> list[str]:
    """Certificates standing for a common_name or verified_chain question; their fingerprints
    replace the case's in the files. The chain file is written in `directory`."""
    question = case["question"]
    fingerprints = question.get("verified_chain") or [question["fingerprint"]]
    if "verified_chain" not in question and question.get("depth", 0) != 0:
        raise ValueError(f"{case['id']}: a common_name question at depth {question['depth']} has no certificate file")
    if len(set(fingerprints)) != len(fingerprints):
        raise ValueError(f"{case['id']}: a chain that holds one fingerprint twice has no certificate file")
    chain = []
    for depth, old in enumerate(fingerprints):
        der = certificate(question.get("common_name") if depth == 0 else None, case["now"])
        chain.append(der)
        for key, content in files.items():
            if content is not None:
                files[key] = content.replace(old.encode("ascii"), fingerprint(der).encode("ascii"))
    path = directory / "chain.pem"
    path.write_bytes(b"".join(pem(der) for der in chain))
    return ["--certificate", str(path)]


def from_case(case: dict, directory: Path) -> Scenario:
    """The case's last files and question; certificate files are written in `directory`."""
    question = case["question"]
    files = {"cache": last_version(case),
             "fallback": json.dumps(case["fallback"], ensure_ascii=False).encode("utf-8") if "fallback" in case else None}
    if "common_name" in question or "verified_chain" in question:
        asked = _chain_question(case, files, directory)
    elif "certificate_pem" in question:
        path = directory / "leaf.pem"
        path.write_text(question["certificate_pem"], "ascii")
        asked = ["--certificate", str(path)]
    else:
        asked = ["--fingerprint", question["fingerprint"]]
        if "depth" in question:
            asked += ["--depth", str(question["depth"])]
    return Scenario(name=question["name"], question=asked, now=case["now"], cache=files["cache"],
                    cache_mode=int(case.get("cache_mode", "0644"), 8), directory_mode=int(case.get("directory_mode", "0755"), 8),
                    fallback=files["fallback"], fallback_mode=int(case.get("fallback_mode", "0644"), 8),
                    fallback_missing=bool(case.get("fallback_missing")), expected_common_names=case.get("expected_common_names"))


def _publish(directory: Path, name: str, content: bytes, mode: int) -> Path:
    """Writes a file as the daemon does: a temporary file, its mode set, renamed over the name."""
    temporary = directory / f".{name}.tmp"
    temporary.write_bytes(content)
    os.chmod(temporary, mode)
    os.replace(temporary, directory / name)
    return directory / name


def option(name: str, value: str) -> list[str]:
    """`--name value`, or `--name=value` when the value could be read as an option."""
    return [f"{name}={value}"] if value.startswith("-") else [name, value]


def write(scenario: Scenario, directory: Path) -> list[str]:
    """Writes the scenario's files under `directory` (made here) and returns the arguments after `validate`."""
    cache_directory = directory / "cache"
    cache_directory.mkdir(parents=True)
    args = ["--cache-directory", str(cache_directory), "--store", STORE]
    if scenario.fallback is not None:
        args += ["--fallback-file", str(_publish(cache_directory, "fallback.json", scenario.fallback, scenario.fallback_mode))]
    elif scenario.fallback_missing:
        args += ["--fallback-file", str(cache_directory / "fallback.json")]
    if scenario.expected_common_names is not None:
        for expected in scenario.expected_common_names or [""]:
            args.append(f"--expected-common-name={expected}")
    if scenario.cache is not None:
        _publish(cache_directory, f"{STORE}.json", scenario.cache, scenario.cache_mode)
    os.chmod(cache_directory, scenario.directory_mode)
    if scenario.extra_args:
        return args + scenario.extra_args
    return args + option("--name", scenario.name) + scenario.question
