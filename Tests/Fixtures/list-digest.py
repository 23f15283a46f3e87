#!/usr/bin/env python3
"""The list digest of docs/monitoring.md ("The list digest"), written from that text alone: a
second implementation the Swift tests compare pinkeeper's digest with.

Usage: list-digest.py [--static] FILE. Reads a Wultra list (JSON) and prints its digest in
lower-case hex.
--static: a static-mode list; depth counts as 0 and domainsConfig is left out. (Which entries a
static list's digest covers is decided by the caller: give only those.)
"""

import base64
import hashlib
import json
import sys


def line(kind, name, *fields):
    """b"<kind> <UTF-8 length> <name> <fields...>\\n"; the length keeps any name one field."""
    return b"%s %d %s%s\n" % (kind, len(name), name, b"".join(b" " + f for f in fields))


def boolean(value):
    return b"true" if value else b"false"


def canonical(doc, static):
    out = b"pinkeeper-list-digest-v1\n"
    pins = set()
    for entry in doc["fingerprints"]:
        fingerprint = base64.b64decode(entry["fingerprint"], validate=True).hex().encode()
        depth = 0 if static else entry.get("depth", 0)
        pins.add(line(b"pin", entry["name"].encode("utf-8"), fingerprint,
                      b"%d" % entry["expires"], b"%d" % depth))
    out += b"".join(sorted(pins))
    config = None if static else doc.get("domainsConfig")
    if config is not None:
        out += b"domains-unlisted " + boolean(config["sslPinningRequiredForUnlisted"]) + b"\n"
        first = {}
        for domain in config["domains"]:
            # bytes.lower() folds the ASCII letters A-Z only, as pinkeeper compares names.
            first.setdefault(domain["name"].encode("utf-8").lower(), domain["sslPinningRequired"])
        out += b"".join(sorted(line(b"domain", name, boolean(required)) for name, required in first.items()))
    return out


def main():
    arguments = sys.argv[1:]
    with open(arguments[-1], "rb") as f:
        doc = json.load(f)
    print(hashlib.sha256(canonical(doc, "--static" in arguments)).hexdigest())


if __name__ == "__main__":
    main()
