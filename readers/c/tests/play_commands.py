#!/usr/bin/env python3
"""Plays every case and every options case of Tests/Conformance/cases.json against
pinkeeper-reader-c validate: its exit status and the first word it prints (the README's
expected_command). The command reads each case's last files once, at the case's time
(faketime, the clock frozen); a question about a chain or a common name gets a certificate
file made here, whose fingerprints replace the case's in the files.

usage: play_commands.py CASES.json READER"""

import base64
import datetime
import hashlib
import json
import os
import subprocess
import sys
import tempfile

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

KEY = ec.generate_private_key(ec.SECP256R1())


def certificate(common_name, serial):
    """A certificate with that CN (none when None); the CLI only hashes it and reads its CN."""
    attributes = [x509.NameAttribute(NameOID.ORGANIZATION_NAME, "pinkeeper test %d" % serial)]
    if common_name is not None:
        attributes.append(x509.NameAttribute(NameOID.COMMON_NAME, common_name))
    name = x509.Name(attributes)
    start = datetime.datetime(2020, 1, 1, tzinfo=datetime.timezone.utc)
    built = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(KEY.public_key())
             .serial_number(serial + 1).not_valid_before(start).not_valid_after(start + datetime.timedelta(days=36500))
             .sign(KEY, hashes.SHA256()))
    return built


def replaced(document, mapping):
    """The document with every fingerprint string in mapping replaced."""
    if isinstance(document, dict):
        return {key: replaced(value, mapping) for key, value in document.items()}
    if isinstance(document, list):
        return [replaced(value, mapping) for value in document]
    if isinstance(document, str):
        return mapping.get(document, document)
    return document


def chain_file(case, directory):
    """Writes the question's certificates (leaf first); returns the path and the fingerprint map."""
    question = case["question"]
    path = os.path.join(directory, "chain.pem")
    if "certificate_pem" in question:
        with open(path, "w") as out:
            out.write(question["certificate_pem"])
        return path, {}
    fingerprints = question.get("verified_chain") or [question["fingerprint"]]
    made = {}  # one certificate per distinct fingerprint; the leaf's carries the common name
    for position, fingerprint in enumerate(fingerprints):
        if fingerprint not in made:
            made[fingerprint] = certificate(question.get("common_name") if position == 0 else None, position)
    with open(path, "wb") as out:
        for fingerprint in fingerprints:
            out.write(made[fingerprint].public_bytes(serialization.Encoding.PEM))
    mapping = {fingerprint: base64.b64encode(hashlib.sha256(item.public_bytes(serialization.Encoding.DER)).digest()).decode()
               for fingerprint, item in made.items()}
    return path, mapping


def write(directory, name, content, mode):
    path = os.path.join(directory, name)
    temporary = path + ".tmp"
    with open(temporary, "wb") as out:
        out.write(content)
    os.chmod(temporary, mode)
    os.rename(temporary, path)
    return path


def content(case, prefix, mapping):
    if prefix in case:
        return json.dumps(replaced(case[prefix], mapping), ensure_ascii=False).encode()
    if prefix + "_text" in case:
        return case[prefix + "_text"].encode("utf-8", "surrogatepass")
    if prefix + "_base64" in case:
        return base64.b64decode(case[prefix + "_base64"])
    return None


def question_arguments(case, directory):
    question = case["question"]
    needs_file = any(key in question for key in ("verified_chain", "common_name", "certificate_pem"))
    if needs_file:
        path, mapping = chain_file(case, directory)
        return ["--certificate", path], mapping
    arguments = ["--fingerprint", question["fingerprint"]]
    if "depth" in question:
        arguments += ["--depth", str(question["depth"])]
    return arguments, {}


def case_arguments(case, directory):
    arguments, mapping = question_arguments(case, directory)
    arguments = ["--name", case["question"]["name"]] + arguments
    cache = content(case, "cache", mapping)
    if cache is not None:
        write(directory, "banking.json", cache, int(case.get("cache_mode", "0644"), 8))
    fallback = content(case, "fallback", mapping)
    if fallback is not None:
        arguments += ["--fallback-file", write(directory, "fallback.json", fallback, int(case.get("fallback_mode", "0644"), 8))]
    elif case.get("fallback_missing"):
        arguments += ["--fallback-file", os.path.join(directory, "no-such-fallback.json")]
    if "expected_common_names" in case:
        for name in case["expected_common_names"] or [""]:
            arguments += ["--expected-common-name", name]
    return arguments


def run(reader, directory, arguments, now):
    # An absolute time given with -f stands still: a case at an entry's last valid second must not
    # see the next one on a loaded machine ("@" would only start the clock there).
    frozen = datetime.datetime.fromtimestamp(now, datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S")
    command = ["faketime", "-f", frozen, reader, "validate", "--cache-directory", directory, "--store", "banking"] + arguments
    result = subprocess.run(command, capture_output=True, env=dict(os.environ, TZ="UTC"))
    stdout, stderr = result.stdout.decode(errors="replace"), result.stderr.decode(errors="replace")
    if result.returncode <= 2:
        word = stdout.split("\n")[0].split(":")[0]
    else:
        first = stderr.split("\n")[0]
        word = first[len("pinkeeper: "):].split(":")[0] if first.startswith("pinkeeper: ") else first
    return result.returncode, word, stdout + stderr


def play(reader, label, directory_mode, prepare, now, expected):
    with tempfile.TemporaryDirectory(prefix="pk-c-command-") as directory:
        os.chmod(directory, directory_mode)
        try:
            status, word, output = run(reader, directory, prepare(directory), now)
        finally:
            os.chmod(directory, 0o755)
    if (status, word) != (expected["status"], expected["word"]):
        print("FAIL %s: status %d word %r, want %d %r\n  %s" % (label, status, word, expected["status"], expected["word"],
                                                                output.strip().replace("\n", "\n  ")))
        return 1
    return 0


def main():
    table_path, reader = sys.argv[1], sys.argv[2]
    with open(table_path, encoding="utf-8") as source:
        table = json.load(source)
    failures = 0
    for case in table["cases"]:
        failures += play(reader, case["id"], int(case.get("directory_mode", "0755"), 8),
                         lambda directory, case=case: case_arguments(case, directory), case["now"], case["expected_command"])
    options = table["options_cache"]
    for case in table["options"]:
        def prepare(directory, case=case):
            write(directory, "banking.json", json.dumps(options["cache"]).encode(), 0o644)
            return case["args"]
        failures += play(reader, "options " + case["id"], 0o755, prepare, options["now"], case["expected_command"])
    print("commands: %d cases, %d options, %d failures" % (len(table["cases"]), len(table["options"]), failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
