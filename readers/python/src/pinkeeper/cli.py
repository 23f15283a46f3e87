"""`python3 -m pinkeeper validate`: the same question, answer and exit status as `pinkeeper validate`.

Standard output starts with the verdict (`trusted`, `untrusted: ...`, `empty: ...`); the exit
status is 0 trusted, 1 untrusted, 2 empty (no valid pin for the name: reject, and update the
store). A cache or fallback file that cannot be used is reported on standard error as
`pinkeeper: <code>: ...` with the reader's error code, exiting 74 for an unreadable file
(`missing`, `symlink`, `not-regular-file`, `io-error`, `insecure-permissions`) and 65 for bad
content (`too-large`, `not-json`, `invalid-content`, `missing-metadata`, `unsupported-format`,
`wrong-store`). A usage error is `pinkeeper: usage: ...`, exiting 64; a certificate file that
cannot be read exits 66, one that holds no readable certificate 65.
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
from .host import canonical_host
from .pins import fold_name
from .validation import Verdict, describe, escaped

EX_USAGE, EX_DATAERR, EX_NOINPUT, EX_IOERR = 64, 65, 66, 74
EXIT_STATUS = {"unreadable": EX_IOERR, "invalid": EX_DATAERR}
STORE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
#: One to nine ASCII digits: no sign, space, "_" or digits of other scripts, which int() would take.
DEPTH = re.compile(r"[0-9]{1,9}")
#: Padded standard base64 of 32 bytes, or 64 hex digits, plain or as 32 colon-separated pairs.
FINGERPRINT_BASE64 = re.compile(r"[A-Za-z0-9+/]{43}=")
FINGERPRINT_HEX = re.compile(r"[0-9A-Fa-f]{64}|[0-9A-Fa-f]{2}(?::[0-9A-Fa-f]{2}){31}")


#: What the daemon drops when a signing key leaves its configuration cannot be told from the file:
#: it names the key that verified each pin and domainsConfig, not the keys still configured.
REMOVED_KEYS = ("Reads no configuration: after a signing key is removed from the daemon's configuration, its pins and "
                "its domainsConfig still decide here until the daemon drops them from the file (when it starts or "
                "reloads, or at `pinkeeper update`); the file names the key that verified each, not the keys still "
                "configured. `pinkeeper validate` without --cache-directory counts only what the configured keys "
                "vouch for.")


class UsageError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    # argparse exits 2 on a usage error, which here would read as `empty`.
    def error(self, message):
        print(f"pinkeeper: usage: {message}", file=sys.stderr)
        self.print_usage(sys.stderr)
        sys.exit(EX_USAGE)


def parser() -> argparse.ArgumentParser:
    # No abbreviations: an option is spelled in full or it is not one.
    top = _Parser(prog="python3 -m pinkeeper", allow_abbrev=False,
                  description="Check a certificate against the pins pinkeeper publishes.")
    commands = top.add_subparsers(dest="command", required=True, parser_class=_Parser)
    validate = commands.add_parser(
        "validate", allow_abbrev=False, description="Answer trusted, untrusted or empty for a certificate of a host, "
        "from the published cache (Wultra semantics and docs/protocol.md, as `pinkeeper validate`). "
        f"{REMOVED_KEYS}",
        epilog="Exit status: 0 trusted; 1 untrusted; 2 empty (reject, and update the store); 64 usage error; "
        "65 bad data; 66 certificate file missing or unreadable; 74 cache or fallback file unreadable.")
    validate.add_argument("--cache-directory", default=DEFAULT_CACHE_DIRECTORY, metavar="DIR",
                          help=f"where the daemon publishes (default {DEFAULT_CACHE_DIRECTORY})")
    validate.add_argument("--store", required=True, metavar="ID", help="the store whose pins decide")
    validate.add_argument("--name", required=True, metavar="H",
                          help="the host the certificate was verified for, put in its one form first; pins under "
                          "it, and with --certificate under the leaf's common name too, are compared")
    validate.add_argument("--fingerprint", metavar="B64", help="the SHA-256 of the DER certificate: padded "
                          "standard base64, or 64 hex digits (plain or as colon-separated pairs)")
    validate.add_argument("--depth", metavar="N", help="with --fingerprint: the certificate's position in its "
                          "chain (0 = leaf), one to nine digits")
    validate.add_argument("--certificate", metavar="FILE", help="a PEM or DER certificate file; a chain is allowed, leaf first")
    validate.add_argument("--fallback-file", metavar="FILE", help="the store's fallback_file (a Wultra list)")
    validate.add_argument("--expected-common-name", action="append", metavar="N", dest="expected",
                          help="one of the store's expected_common_names (repeat for each)")
    return top


def digest(text: str) -> Optional[bytes]:
    """32 bytes from padded standard base64, or from hex (colon-separated pairs allowed, as
    openssl prints it); None for anything else."""
    if FINGERPRINT_BASE64.fullmatch(text):
        return binascii.a2b_base64(text)
    if FINGERPRINT_HEX.fullmatch(text):
        return bytes.fromhex(text.replace(":", ""))
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


def _checked_usage(arguments) -> Tuple[Optional[bytes], int]:
    """The --fingerprint digest (None with --certificate) and --depth; UsageError when the
    options do not make one question."""
    # An empty host leaves only the certificate's own name to decide by (docs/protocol.md); the
    # reader would answer untrusted, but as `pinkeeper validate` it is refused as a usage error.
    if not arguments.name:
        raise UsageError("--name must be the host a client connects to, not empty")
    if (arguments.fingerprint is None) == (arguments.certificate is None):
        raise UsageError("give exactly one of --fingerprint or --certificate")
    if not STORE_ID.fullmatch(arguments.store):
        raise UsageError(f"--store '{escaped(arguments.store)}' is not a store id ([A-Za-z0-9][A-Za-z0-9._-]{{0,63}})")
    if arguments.depth is not None:
        if arguments.fingerprint is None:
            raise UsageError("--depth goes with --fingerprint (a chain's depths are its positions)")
        if not DEPTH.fullmatch(arguments.depth):
            raise UsageError(f"--depth must be one to nine digits 0-9 (0 = leaf), not '{escaped(arguments.depth)}'")
    depth = int(arguments.depth or 0)
    if arguments.fingerprint is None:
        return None, depth
    fingerprint = digest(arguments.fingerprint)
    if fingerprint is None:
        raise UsageError("--fingerprint must be the SHA-256 digest as 44 characters of padded standard base64 or "
                         f"as 64 hex digits (colon-separated pairs allowed), not '{escaped(arguments.fingerprint)}'")
    return fingerprint, depth


def validate(arguments) -> int:
    fingerprint, depth = _checked_usage(arguments)
    store, name = arguments.store, arguments.name
    # One empty --expected-common-name stands for an empty list (no name is admitted); an empty
    # name is never one to admit.
    expected = None if arguments.expected is None else [name for name in arguments.expected if name]
    try:
        reader = CacheReader(store, cache_directory=arguments.cache_directory, fallback_file=arguments.fallback_file,
                             expected_common_names=expected)
    except CacheReaderError as error:
        return fail(EXIT_STATUS[error.kind], f"{error.code}: store '{store}': {error}")
    if fingerprint is not None:
        # A bare digest carries no certificate, so no common name: only the host is consulted.
        return report(reader.verdict(name, fingerprint, depth), reader, name, None)
    try:
        with open(arguments.certificate, "rb") as file:
            data = file.read()
    except FileNotFoundError:
        return fail(EX_NOINPUT, f"certificate file {arguments.certificate} does not exist: give a PEM or DER file")
    except OSError as error:
        return fail(EX_NOINPUT, f"certificate file {arguments.certificate} cannot be read ({error.strerror})")
    try:
        chain = certificate_chain(data)
        common_name = certificate_common_name(chain[0])
    except ValueError as error:
        return fail(EX_DATAERR, f"certificate file {arguments.certificate} {error}: give a PEM or DER certificate")
    digests = [hashlib.sha256(der).digest() for der in chain]
    # As `pinkeeper validate --certificate`: the file's certificates at their positions, as if verified.
    verdict = reader.verdict_for_verified_digests(name, digests, common_name=common_name)
    status = report(verdict, reader, name, common_name)
    for position, value in enumerate(digests):
        print(f"depth {position}: sha256 {base64.b64encode(value).decode()}")
    host = canonical_host(name)
    if host is not None and common_name is not None and fold_name(common_name) != host:
        print(f"note: the leaf's common name '{escaped(common_name)}' differs from --name '{escaped(host)}': "
              "pins under either are compared, and pinning is skipped only if domainsConfig exempts both")
    return status


def report(verdict: Verdict, reader: CacheReader, name: str, common_name: Optional[str]) -> int:
    """Prints the verdict as the first line and returns the exit status. `name` is --name as given;
    the messages show the host in its one form, which is what the pins were looked up under."""
    store, host = reader.store, canonical_host(name)
    if host is None:
        print(f"untrusted: {describe(name)} has no one spelling (leading zeros, octal or short IPv4, a zone id, "
              f"an empty label...), so no pin of store '{store}' can be looked up for it; give its canonical form")
        return 1
    peer = describe(host, common_name)
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
    # A name from the command line may hold bytes that are not UTF-8 (surrogates in Python):
    # escaped when printed, never a UnicodeEncodeError instead of the verdict.
    for stream in (sys.stdout, sys.stderr):
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="backslashreplace")
    top = parser()
    arguments = top.parse_args(argv)
    try:
        return validate(arguments)
    except UsageError as error:
        print(f"pinkeeper: usage: {error} (see python3 -m pinkeeper validate --help)", file=sys.stderr)
        return EX_USAGE
