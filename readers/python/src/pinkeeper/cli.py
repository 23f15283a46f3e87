"""`python3 -m pinkeeper validate`: the same question, answer and exit status as `pinkeeper validate`.

Exit status: 0 trusted; 1 untrusted; 2 empty (no valid pin for the name: reject, and update the
store); 64 usage error; 65 bad data (certificate or cache file content); 66 certificate file
missing or unreadable; 74 cache or fallback file unreadable.
"""

from __future__ import annotations

import argparse
import base64
import binascii
import hashlib
import re
import sys
from typing import List, Optional, Tuple

from .cache import DEFAULT_CACHE_DIRECTORY, CacheReader, CacheReaderError
from .pins import fold_name
from .validation import Verdict, describe, escaped

EX_USAGE, EX_DATAERR, EX_NOINPUT, EX_IOERR = 64, 65, 66, 74
STORE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")


class UsageError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    # argparse exits 2 on a usage error, which here would read as `empty`.
    def error(self, message):
        self.print_usage(sys.stderr)
        print(f"Error: {message}", file=sys.stderr)
        sys.exit(EX_USAGE)


def parser() -> argparse.ArgumentParser:
    top = _Parser(prog="python3 -m pinkeeper",
                  description="Check a certificate against the pins pinkeeper publishes.")
    commands = top.add_subparsers(dest="command", required=True, parser_class=_Parser)
    validate = commands.add_parser(
        "validate", description="Answer trusted, untrusted or empty for a certificate of a host, "
        "from the published cache (Wultra semantics and PROTOCOL.md §5.1, as `pinkeeper validate`).",
        epilog="Exit status: 0 trusted; 1 untrusted; 2 empty (reject, and update the store); 64 usage error; "
        "65 bad data; 66 certificate file missing or unreadable; 74 cache file unreadable.")
    validate.add_argument("--cache-directory", default=DEFAULT_CACHE_DIRECTORY, metavar="DIR",
                          help=f"where the daemon publishes (default {DEFAULT_CACHE_DIRECTORY})")
    validate.add_argument("--store", required=True, help="the store whose pins decide")
    validate.add_argument("--name", required=True,
                          help="the host the certificate was verified for; pins under it, and with --certificate "
                          "under the leaf's common name too, are compared (names ignore ASCII case only)")
    validate.add_argument("--fingerprint", help="base64 (or hex) SHA-256 of the DER certificate")
    validate.add_argument("--depth", type=int, help="with --fingerprint: the certificate's position in its chain (0 = leaf)")
    validate.add_argument("--certificate", metavar="FILE", help="a PEM or DER certificate file; a chain is allowed, leaf first")
    validate.add_argument("--fallback-file", metavar="FILE", help="the store's fallback_file (a Wultra list)")
    validate.add_argument("--expected-common-name", action="append", metavar="CN", dest="expected",
                          help="one of the store's expected_common_names (repeat for each)")
    return top


def digest(text: str) -> Optional[bytes]:
    """32 bytes from standard base64 (padded) or hex (colons allowed, as openssl prints it)."""
    try:
        raw = base64.b64decode(text, validate=True)
        if len(raw) == 32:
            return raw
    except (binascii.Error, ValueError):
        pass
    hexadecimal = text.replace(":", "")
    if len(hexadecimal) != 64:
        return None
    try:
        return bytes.fromhex(hexadecimal)
    except ValueError:
        return None


def certificate_chain(data: bytes) -> List[bytes]:
    """DER certificates from PEM (any other PEM blocks, such as a key, are skipped) or from
    concatenated DER. Only the framing is checked: the digest is of the bytes as given."""
    if b"-----BEGIN " in data:
        blocks = re.findall(rb"-----BEGIN CERTIFICATE-----(.*?)-----END CERTIFICATE-----", data, re.S)
        if not blocks:
            raise ValueError("holds no PEM certificate")
        try:
            return [base64.b64decode(b"".join(block.split()), validate=True) for block in blocks]
        except (binascii.Error, ValueError):
            raise ValueError("holds a PEM certificate that is not valid base64") from None
    if not data:
        raise ValueError("is empty")
    chain, offset = [], 0
    while offset < len(data):
        length = _der_length(data, offset)
        if length is None:
            raise ValueError(f"is neither PEM nor DER (certificate {len(chain) + 1} at byte {offset})")
        chain.append(data[offset:offset + length])
        offset += length
    return chain


def _der_length(data: bytes, offset: int) -> Optional[int]:
    """The whole length of the DER SEQUENCE at offset, or None when there is none."""
    if data[offset] != 0x30 or offset + 2 > len(data):
        return None
    first = data[offset + 1]
    if first < 0x80:
        header, body = 2, first
    else:
        count = first & 0x7F
        if count == 0 or count > 4 or offset + 2 + count > len(data):
            return None
        header, body = 2 + count, int.from_bytes(data[offset + 2:offset + 2 + count], "big")
    return header + body if offset + header + body <= len(data) else None


class _DER:
    """Just enough DER to find a certificate's subject: definite lengths, one-byte tags."""

    def __init__(self, data: bytes, start: int = 0, end: Optional[int] = None):
        self.data, self.offset, self.end = data, start, len(data) if end is None else end

    def next(self) -> Tuple[int, int, int]:
        """The next element as (tag, content start, content end)."""
        data, offset = self.data, self.offset
        if offset + 2 > self.end:
            raise ValueError("ends inside an element")
        tag, first = data[offset], data[offset + 1]
        if tag & 0x1F == 0x1F:
            raise ValueError("has a multi-byte tag")
        start, length = offset + 2, first
        if first >= 0x80:
            count = first & 0x7F
            if not 1 <= count <= 4 or start + count > self.end:
                raise ValueError("has an invalid length")
            start, length = start + count, int.from_bytes(data[start:start + count], "big")
        if start + length > self.end:
            raise ValueError("has an element longer than its container")
        self.offset = start + length
        return tag, start, start + length

    def inside(self, expected_tag: int) -> "_DER":
        tag, start, end = self.next()
        if tag != expected_tag:
            raise ValueError(f"has tag 0x{tag:02x} where 0x{expected_tag:02x} belongs")
        return _DER(self.data, start, end)

    def more(self) -> bool:
        return self.offset < self.end


_COMMON_NAME_OID = bytes([0x55, 0x04, 0x03])  # 2.5.4.3
# How OpenSSL's ASN1_STRING_to_UTF8 (and so the Swift reader and Python's getpeercert) reads
# each string type: UTF8String, then the one-byte-per-character types, BMPString, UniversalString.
_STRING_ENCODINGS = {0x0C: "utf-8", 0x12: "latin-1", 0x13: "latin-1", 0x14: "latin-1", 0x16: "latin-1",
                     0x1A: "latin-1", 0x1E: "utf-16-be", 0x1C: "utf-32-be"}


def certificate_common_name(der: bytes) -> Optional[str]:
    """The most specific (last in DER order) common name of a DER certificate's subject, as the
    TLS helper and `pinkeeper validate` take it; None when the subject has none. Raises
    ValueError when the certificate cannot be read that far."""
    tbs = _DER(der).inside(0x30).inside(0x30)
    tag, _, _ = tbs.next()
    if tag == 0xA0:  # [0] version; then the serial number
        tag, _, _ = tbs.next()
    if tag != 0x02:
        raise ValueError("has no serial number where a certificate has one")
    for _ in ("signature", "issuer", "validity"):
        tbs.inside(0x30)
    subject, found = tbs.inside(0x30), None
    while subject.more():
        relative = subject.inside(0x31)
        while relative.more():
            attribute = relative.inside(0x30)
            kind, start, end = attribute.next()
            if kind == 0x06 and der[start:end] == _COMMON_NAME_OID:
                found = attribute.next()
    if found is None:
        return None
    tag, start, end = found
    if tag not in _STRING_ENCODINGS:
        raise ValueError(f"has a common name of string type 0x{tag:02x}")
    try:
        return der[start:end].decode(_STRING_ENCODINGS[tag])
    except UnicodeDecodeError:
        raise ValueError("has a common name that is not valid in its string type") from None


def validate(arguments) -> int:
    # An empty host leaves only the certificate's own name to decide by (PROTOCOL.md §5.1); the
    # reader would answer untrusted, but as `pinkeeper validate` it is refused as a usage error.
    if not arguments.name:
        raise UsageError("--name must be the host a client connects to, not empty")
    if (arguments.fingerprint is None) == (arguments.certificate is None):
        raise UsageError("give exactly one of --fingerprint or --certificate")
    if arguments.depth is not None:
        if arguments.fingerprint is None:
            raise UsageError("--depth goes with --fingerprint (a chain's depths are its positions)")
        if arguments.depth < 0:
            raise UsageError("--depth must be 0 (leaf) or more")
    fingerprint = None
    if arguments.fingerprint is not None:
        fingerprint = digest(arguments.fingerprint)
        if fingerprint is None:
            raise UsageError(f"--fingerprint must be the base64 (or hex) of a 32-byte SHA-256 digest, "
                             f"not '{arguments.fingerprint}'")
    if not STORE_ID.fullmatch(arguments.store):
        raise UsageError(f"--store '{arguments.store}' is not a store id ([A-Za-z0-9][A-Za-z0-9._-]{{0,63}})")
    store, host = arguments.store, arguments.name
    try:
        reader = CacheReader(store, cache_directory=arguments.cache_directory, fallback_file=arguments.fallback_file,
                             expected_common_names=arguments.expected)
    except CacheReaderError as error:
        return fail(EX_DATAERR if error.kind == "invalid" else EX_IOERR, f"store '{store}': {error}")

    if fingerprint is not None:
        # A bare digest carries no certificate, so no common name: only the host is consulted.
        return report(reader.verdict(host, fingerprint, arguments.depth or 0), reader, host, None)
    try:
        with open(arguments.certificate, "rb") as file:
            data = file.read()
    except FileNotFoundError:
        return fail(EX_NOINPUT, f"certificate file {arguments.certificate} does not exist")
    except OSError as error:
        return fail(EX_NOINPUT, f"certificate file {arguments.certificate} cannot be read ({error.strerror})")
    try:
        chain = certificate_chain(data)
        common_name = certificate_common_name(chain[0])
    except ValueError as error:
        return fail(EX_DATAERR, f"certificate file {arguments.certificate} {error}")
    digests = [hashlib.sha256(der).digest() for der in chain]
    for depth, value in enumerate(digests):
        print(f"depth {depth}: sha256 {base64.b64encode(value).decode()}")
    if common_name is not None and fold_name(common_name) != fold_name(host):
        print(f"note: the leaf's common name '{escaped(common_name)}' differs from --name '{escaped(host)}': "
              "pins under either are compared, and pinning is skipped only if domainsConfig exempts both")
    # As `pinkeeper validate --certificate`: the file's certificates at their positions, as if verified.
    return report(reader.verdict_for_verified_digests(host, digests, common_name=common_name), reader, host,
                  common_name)


def report(verdict: Verdict, reader: CacheReader, host: str, common_name: Optional[str]) -> int:
    store, peer = reader.store, describe(host, common_name)
    if verdict is Verdict.TRUSTED:
        print("trusted")
        return 0
    if verdict is Verdict.UNTRUSTED:
        if not reader.admits(host, common_name=common_name):
            print(f"untrusted: {peer} is not among the expected_common_names of store '{store}'")
        else:
            print(f"untrusted: store '{store}' pins {peer}, but not this certificate")
        return 1
    print(f"empty: store '{store}' has no valid pin for {peer}; reject, and run `pinkeeper update --store {store}`")
    return 2


def fail(status: int, message: str) -> int:
    print(f"pinkeeper: {message}", file=sys.stderr)
    return status


def main(argv: Optional[List[str]] = None) -> int:
    top = parser()
    arguments = top.parse_args(argv)
    try:
        return validate(arguments)
    except UsageError as error:
        print(f"Error: {error}", file=sys.stderr)
        return EX_USAGE
