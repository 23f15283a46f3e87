#!/usr/bin/env python3
"""Is a TLS peer's certificate pinned? Answered from a pinkeeper cache file, without pinkeeper.

    validate.py [--depth N] [--fallback FILE] [--expected-name NAME]... [--now SECONDS]
                CACHE_FILE HOST FINGERPRINT

FINGERPRINT is the standard base64 of the SHA-256 of the certificate's DER bytes, e.g.
    openssl x509 -in cert.pem -outform DER | openssl dgst -sha256 -binary | base64

Prints trusted, untrusted or empty and exits 0, 1 or 2 (treat both 1 and 2 as "reject";
2 means the store has no live pin for the name and needs an update). 64 usage error,
65 the cache file is not a pinkeeper cache file, 66 it cannot be read (or is a symlink, FIFO
or anything else that is not a regular file: refused at once, never waited on).

HOST is the name the client connected to and verified the certificate for, never a name read
from the certificate (docs/cache-format.md, "Validating": with a chain, pinkeeper's own readers
consult the leaf's common name beside it; this example answers for the host alone). The rules
are Wultra's: a name outside the expected names is untrusted; then a listed domain in
domainsConfig that does not require pinning is trusted; only unexpired entries for this name
and depth count; any matching fingerprint wins; none live is "empty". Names compare by Unicode
code points, ASCII letters case-insensitively (str.lower() would also fold other letters). \
In a static-mode file ("mode": "static") only name, fingerprint
and expires are signed: domainsConfig is ignored and entries with a depth are skipped.
Standard library only.
"""

import argparse
import base64
import binascii
import errno
import json
import os
import stat
import sys
import time

TRUSTED, UNTRUSTED, EMPTY = "trusted", "untrusted", "empty"
EXIT = {TRUSTED: 0, UNTRUSTED: 1, EMPTY: 2}


def decode_fingerprint(text):
    """Raw 32-byte digest from standard base64 (strict: no URL-safe alphabet, no junk)."""
    try:
        digest = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        return None
    return digest if len(digest) == 32 else None


ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def same_name(a, b):
    return a.translate(ASCII_LOWER) == b.translate(ASCII_LOWER)


def pinning_required(domains_config, name):
    if domains_config is None:
        return True
    for domain in domains_config.get("domains", []):
        if same_name(domain["name"], name):
            return domain["sslPinningRequired"]
    return domains_config["sslPinningRequiredForUnlisted"]


def verdict(entries, domains_config, name, fingerprint, depth, now, expected_names=None):
    """entries: cached entries followed by fallback entries, as parsed from JSON."""
    # The operator's expected names come first: domainsConfig, from the server, must not widen them.
    if expected_names and not any(same_name(expected, name) for expected in expected_names):
        return UNTRUSTED
    if not pinning_required(domains_config, name):
        return TRUSTED
    if not entries:
        return EMPTY
    attempts = 0
    for entry in entries:
        if not same_name(entry["name"], name) or entry.get("depth", 0) != depth:
            continue
        if entry["expires"] < now:  # expired: never trusted, not even counted
            continue
        if decode_fingerprint(entry["fingerprint"]) == fingerprint:
            return TRUSTED
        attempts += 1
    return UNTRUSTED if attempts else EMPTY


def read_regular_file(path, follow_symlink):
    """The bytes of the regular file at path. O_NONBLOCK: a FIFO planted there is refused at once
    instead of waiting for a writer; O_NOFOLLOW (cache files only): nothing planted is followed."""
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | (0 if follow_symlink else os.O_NOFOLLOW)
    try:
        fd = os.open(path, flags)
    except OSError as error:
        if error.errno == errno.ELOOP and not follow_symlink:
            fail(66, f"{path}: is a symlink, which is never followed")
        fail(66, f"{path}: {error.strerror}")
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            fail(66, f"{path}: not a regular file (a FIFO, device or directory?)")
        try:
            return handle.read()
        except OSError as error:
            fail(66, f"{path}: {error.strerror}")


def load(path, need_metadata):
    """need_metadata: a cache file (never through a symlink); otherwise a fallback list, which
    is configuration and may be a symlink."""
    data = read_regular_file(path, follow_symlink=not need_metadata)
    try:
        document = json.loads(data)
    except ValueError as error:
        fail(65, f"{path}: not JSON: {error}")
    if not isinstance(document, dict) or not isinstance(document.get("fingerprints"), list):
        fail(65, f"{path}: no \"fingerprints\" array")
    if need_metadata:
        meta = document.get("pinkeeper")
        if not isinstance(meta, dict) or meta.get("format") != 1:
            fail(65, f"{path}: not a pinkeeper cache file of format 1")
        if meta.get("mode", "challenge") not in ("challenge", "static"):
            fail(65, f"{path}: unknown list mode {meta.get('mode')!r}")
    return document


def signed_part(cache):
    """(entries, domainsConfig) a reader may trust: a static list signs neither depth nor domainsConfig."""
    if cache["pinkeeper"].get("mode") == "static":
        return [e for e in cache["fingerprints"] if e.get("depth", 0) == 0], None
    return list(cache["fingerprints"]), cache.get("domainsConfig")


def fail(status, message):
    print(f"validate.py: {message}", file=sys.stderr)
    sys.exit(status)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("cache_file")
    parser.add_argument("host")
    parser.add_argument("fingerprint", help="base64 SHA-256 of the DER certificate")
    parser.add_argument("--depth", type=int, default=0, help="position in the verified chain, never in what the server sent (0 = leaf)")
    parser.add_argument("--fallback", help="the store's fallback_file (a Wultra list)")
    parser.add_argument("--expected-name", action="append", dest="expected_names",
                        help="the store's expected_common_names (repeatable)")
    parser.add_argument("--now", type=int, help="validate as of this Unix time (default: now)")
    try:
        args = parser.parse_args()
    except SystemExit as exit_:
        sys.exit(0 if exit_.code == 0 else 64)  # --help is fine; anything else is a usage error

    fingerprint = decode_fingerprint(args.fingerprint)
    if fingerprint is None or args.depth < 0:
        fail(64, "FINGERPRINT must be the base64 of a 32-byte SHA-256 digest; --depth must be >= 0")

    cache = load(args.cache_file, need_metadata=True)
    try:
        entries, domains_config = signed_part(cache)
    except AttributeError as error:
        fail(65, f"{args.cache_file}: malformed entry ({error!r})")
    if args.fallback:
        entries += load(args.fallback, need_metadata=False)["fingerprints"]  # domainsConfig ignored there
    now = args.now if args.now is not None else int(time.time())

    try:
        answer = verdict(entries, domains_config, args.host, fingerprint, args.depth,
                         now, args.expected_names)
    except (KeyError, TypeError, AttributeError) as error:
        fail(65, f"{args.cache_file}: malformed entry ({error!r})")
    print(answer)
    sys.exit(EXIT[answer])


if __name__ == "__main__":
    main()
