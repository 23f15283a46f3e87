#!/usr/bin/env python3
"""pinkeeper-reader-c validate --help says that the command reads no configuration, so that the pins
of a signing key removed from the daemon's configuration still count until the daemon drops them
from the file; and they do: a file with pins under two keys answers trusted for both.

usage: command_help.py READER"""

import base64
import json
import os
import subprocess
import sys
import tempfile

NAME = "api.example.com"
FAR_FUTURE = 4102444800  # 2100-01-01: the real clock never reaches it
SAID = ("Reads no configuration: after a signing key is removed from the daemon's configuration, its pins and its "
        "domainsConfig still decide here until the daemon drops them from the file",
        "`pinkeeper validate` without --cache-directory counts only what the configured keys vouch for")


def digest(byte):
    return base64.b64encode(bytes([byte]) * 32).decode()


def publish(directory, entries):
    """Writes banking.json as the daemon publishes it: challenge mode, each pin with its key."""
    document = {"fingerprints": entries,
                "pinkeeper": {"format": 1, "store": "banking", "mode": "challenge", "source": "https://pins.example.com/list",
                              "updated": 1763766400, "nextUpdate": 1764374800}}
    path = os.path.join(directory, "banking.json")
    with open(path + ".tmp", "w", encoding="utf-8") as out:
        json.dump(document, out)
    os.chmod(path + ".tmp", 0o644)
    os.rename(path + ".tmp", path)


def failures_of_removed_key_pins(reader, directory):
    # The file names the key that verified each pin, not the keys still configured: a pin of a key
    # the operator has since removed decides here until the daemon rewrites the file without it.
    kept = {"name": NAME, "fingerprint": digest(1), "expires": FAR_FUTURE, "key": "3f1c0c6a9b2e4d71"}
    removed = {"name": NAME, "fingerprint": digest(3), "expires": FAR_FUTURE, "key": "0123456789abcdef"}
    publish(directory, [kept, removed])
    failures = 0
    for entry in (kept, removed):
        result = subprocess.run([reader, "validate", "--cache-directory", directory, "--store", "banking", "--name", NAME,
                                 "--fingerprint", entry["fingerprint"]], capture_output=True, text=True)
        if (result.returncode, result.stdout) != (0, "trusted\n"):
            print("FAIL the pin of key %s: %d %r %r" % (entry["key"], result.returncode, result.stdout, result.stderr))
            failures += 1
    return failures


def failures_of_help(reader):
    failures = 0
    for asked in (["--help"], ["validate", "--help"]):
        result = subprocess.run([reader] + asked, capture_output=True, text=True)
        text = " ".join(result.stdout.split())
        missing = [sentence for sentence in SAID if sentence not in text]
        if result.returncode != 0 or missing:
            print("FAIL %s: status %d, missing %r in:\n%s" % (" ".join(asked), result.returncode, missing, result.stdout))
            failures += 1
    return failures


def main():
    reader = sys.argv[1]
    with tempfile.TemporaryDirectory(prefix="pk-c-help-") as directory:
        failures = failures_of_removed_key_pins(reader, directory) + failures_of_help(reader)
    print("command help: %d failures" % failures)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
