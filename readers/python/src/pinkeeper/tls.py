"""Pin checking on top of Python's full TLS verification.

`pinned_context(reader)` is an `ssl.SSLContext` for clients that verifies the chain and the host
name exactly as `ssl.create_default_context()` does, and then, once the handshake succeeded,
checks the server's certificates against the store's pins before any application data is sent.
Pins are looked up under the host the handshake verified, in its one form (`canonical_host`), and
the leaf's common name (docs/protocol.md); a connection without a verified host name, or whose
host has no one form (`127.000.000.001`, a zone id), is refused. The context refuses to have its
verification weakened (`check_hostname`, `verify_mode`, `hostname_checks_common_name`): OpenSSL
fixes them for a connection when its socket is wrapped, so a change made and undone in between
could otherwise pass an unverified host.
It works wherever an `SSLContext` is accepted: `wrap_socket`, `http.client`, `urllib.request`,
`urllib3.PoolManager(ssl_context=...)`, `requests` (`pinkeeper.requests_adapter`), and
`httpx.Client(verify=...)` / `httpx.AsyncClient(verify=...)`.
"""

from __future__ import annotations

import _ssl
import ssl
import threading
from typing import List, Optional

from .cache import CacheReader
from .host import canonical_host
from .validation import Verdict, describe

#: Whether this interpreter can give the chain OpenSSL verified (Python 3.13+). Without it only
#: the leaf is known, so pins with depth >= 1 never apply (fail closed: a name pinned only at
#: depth >= 1 answers `empty`, and the connection is refused).
HAS_VERIFIED_CHAIN = hasattr(ssl.SSLSocket, "get_verified_chain") and hasattr(ssl.SSLObject, "get_verified_chain")


class PinningError(ssl.SSLCertVerificationError):
    """The chain and host name verified, but the certificate is not pinned (`untrusted`) or the
    store has no valid pin for the peer's names (`empty`: the store needs an update), or there
    was no verified host name to decide by, or verification was (or was about to be) turned off
    (`verdict` None). All mean reject. A subclass of `ssl.SSLCertVerificationError` (and so of
    `ValueError`), so every HTTP library reports it as a TLS verification failure. `host` and
    `common_name` are the names that were consulted (None when unknown)."""

    def __init__(self, message: str, verdict: Optional[Verdict] = None, common_name: Optional[str] = None,
                 host: Optional[str] = None):
        super().__init__(message)
        self.verify_message = message
        self.verdict = verdict
        self.host = host
        self.common_name = common_name

    def __str__(self) -> str:
        return self.verify_message


def pinned_context(reader: CacheReader, *, cafile: Optional[str] = None, capath: Optional[str] = None,
                   cadata=None, common_name: Optional[str] = None) -> "PinnedSSLContext":
    """A client context with the platform's default verification (or only the given CAs, as
    `ssl.create_default_context` takes them) plus the pins of `reader`.

    Pins are looked up under two names (docs/protocol.md, "the host decides"): the host the connection verified
    (`server_hostname`), always, and the leaf certificate's common name (the most specific CN, as
    Wultra's clients use). `common_name`, when given, is consulted instead of the leaf's CN: an
    operator's fixed name in place of the one the certificate's holder chose. It never replaces
    the host, so it cannot lift a pinning requirement the host has."""
    context = PinnedSSLContext(ssl.PROTOCOL_TLS_CLIENT)  # CERT_REQUIRED and check_hostname on
    if cafile or capath or cadata:
        context.load_verify_locations(cafile, capath, cadata)
    else:
        context.load_default_certs(ssl.Purpose.SERVER_AUTH)
    context.pin_reader = reader
    context.pin_common_name = common_name
    return context


def verified_chain(connection) -> List[bytes]:
    """The DER certificates OpenSSL verified, leaf first; only the leaf where the interpreter
    cannot say (before 3.13) or the session gives no verified chain (a resumed session)."""
    leaf = connection.getpeercert(binary_form=True)
    if not leaf:
        return []
    if HAS_VERIFIED_CHAIN:
        chain = [bytes(der) for der in connection.get_verified_chain()]
        if chain and chain[0] == leaf:
            return chain
    return [leaf]


def leaf_common_name(connection) -> Optional[str]:
    """The leaf's most specific (last in DER order) common name, as Android's
    DistinguishedNameParser.findMostSpecific("CN") and the Swift reader choose it."""
    names = [value for rdn in connection.getpeercert().get("subject", ()) for key, value in rdn if key == "commonName"]
    return names[-1] if names else None


def _verifies(context) -> bool:
    """Whether `context` now verifies the chain and the host name (what the pins sit on)."""
    return context.verify_mode == ssl.CERT_REQUIRED and bool(context.check_hostname)


_TURNED_OFF = ("pinkeeper: chain and host name verification must stay on (verify_mode CERT_REQUIRED, "
               "check_hostname True), but {what}: refused, pins are never checked without them")


def check_connection(connection, reader: CacheReader, common_name: Optional[str] = None) -> Verdict:
    """Checks a connection whose handshake finished: chain and host name verification must have
    been on, then the verified chain must match a live pin for the verified host
    (`connection.server_hostname`) or the leaf's common name (`common_name` instead, when
    given). Raises PinningError otherwise.

    OpenSSL takes the verification settings from the context when the socket is wrapped, so for
    a connection made by a pinned context they are the ones recorded then; the context's current
    settings must verify too. For another context only the current ones can be seen, which a
    change between wrapping and now would hide: use `pinned_context`."""
    # Without verification the "verified" chain is only what the server sent, and any pinned
    # certificate of another host would do: refuse rather than check pins on top of nothing.
    if getattr(connection, "_pinkeeper_verified_when_wrapped", True) is not True:
        raise PinningError(_TURNED_OFF.format(what="they were off when this connection was set up"))
    context = connection.context
    if not _verifies(context):
        raise PinningError(_TURNED_OFF.format(what="they are off in this connection's context"))
    if connection.server_side:
        raise PinningError("pinkeeper: pins are checked on client connections only")
    # H: what check_hostname verified the certificate for, in its one form. Without it only the
    # certificate's own CN would be left to decide by, which is the name its holder chose: refuse instead.
    host = connection.server_hostname
    if not host:
        raise PinningError(f"pinkeeper: store '{reader.store}' decides by the host name the connection "
                           "verified, and this connection has none (no server_hostname): refused",
                           Verdict.UNTRUSTED)
    host = _one_spelling(host, reader)
    chain = verified_chain(connection)
    if not chain:
        raise PinningError(f"pinkeeper: the server sent no certificate for {describe(host)} (store '{reader.store}')",
                           Verdict.UNTRUSTED, None, host)
    name = common_name or leaf_common_name(connection)
    verdict = reader.verdict_for_verified_chain(host, chain, common_name=name)
    if verdict is Verdict.TRUSTED:
        return verdict
    peer = describe(host, name)
    if verdict is Verdict.EMPTY:
        message = (f"pinkeeper: store '{reader.store}' has no valid pin for {peer} (empty); "
                   f"rejected: update the store (pinkeeper update --store {reader.store})")
    elif not reader.admits(host, common_name=name):
        message = f"pinkeeper: {peer} is not among the expected_common_names of store '{reader.store}' (untrusted)"
    else:
        message = f"pinkeeper: the certificate of {peer} is not pinned in store '{reader.store}' (untrusted)"
    raise PinningError(message, verdict, name, host)


def _one_spelling(verified_host: str, reader: CacheReader) -> str:
    """H in its one form (docs/protocol.md, "H in one spelling"). OpenSSL matched the certificate
    to the address or name the spelling stands for (`0000::1` is `::1`, and it reads
    `127.000.000.001` as `127.0.0.1`): looked up as typed, such a spelling would miss the host's
    pins and its domainsConfig entry. A spelling without one form is refused, never looked up."""
    host = canonical_host(verified_host)
    if host is None:
        raise PinningError(f"pinkeeper: store '{reader.store}' decides by the host the connection verified, and "
                           f"{describe(verified_host)} has no one spelling (leading zeros, octal or short IPv4, a "
                           "zone id...): refused; connect with its canonical form", Verdict.UNTRUSTED, None,
                           verified_host)
    return host


class _PinCheck:
    """Shared by the socket and the memory-BIO object: check once, right after the handshake,
    and make sure no data moves before that (an implicit handshake inside read or write would
    otherwise skip the check and could send a request to an unpinned server)."""

    _pins_checked = False

    def _check_pins(self) -> None:
        context = self.context
        reader = getattr(context, "pin_reader", None)
        if reader is None:
            raise PinningError("pinkeeper: this context has no pin reader; make it with pinkeeper.tls.pinned_context()")
        check_connection(self, reader, getattr(context, "pin_common_name", None))
        self._pins_checked = True

    def _ensure_pinned(self) -> None:
        if not self._pins_checked:
            self.do_handshake()


def _checked_first(base, name):
    """`base.name`, but the pins are checked (the handshake finished) before any byte moves."""
    unchecked = getattr(base, name)

    def method(self, *args, **kwargs):
        self._ensure_pinned()
        return unchecked(self, *args, **kwargs)

    method.__name__ = name
    return method


class PinnedSSLSocket(_PinCheck, ssl.SSLSocket):
    def do_handshake(self, block=False):
        super().do_handshake(block)
        self._check_pins()

    read, write, send, recv, recv_into = (_checked_first(ssl.SSLSocket, name)
                                          for name in ("read", "write", "send", "recv", "recv_into"))


class PinnedSSLObject(_PinCheck, ssl.SSLObject):
    """What asyncio, anyio (httpx.AsyncClient) and urllib3's TLS-in-TLS use."""

    def do_handshake(self):
        super().do_handshake()
        self._check_pins()

    read, write = (_checked_first(ssl.SSLObject, name) for name in ("read", "write"))


# Host flags that make OpenSSL's host name check stricter, and those that make it looser: a
# pinned context may gain the first and lose the second, never the other way round.
_STRICT_HOST_FLAGS = {_ssl.HOSTFLAG_NEVER_CHECK_SUBJECT: "hostname_checks_common_name cannot be turned on",
                      _ssl.HOSTFLAG_NO_WILDCARDS: "wildcards cannot be allowed again",
                      _ssl.HOSTFLAG_NO_PARTIAL_WILDCARDS: "partial wildcards cannot be allowed"}
_LOOSE_HOST_FLAGS = {_ssl.HOSTFLAG_ALWAYS_CHECK_SUBJECT: "the common name cannot be checked beside DNS names",
                     _ssl.HOSTFLAG_MULTI_LABEL_WILDCARDS: "multi-label wildcards cannot be allowed",
                     _ssl.HOSTFLAG_SINGLE_LABEL_SUBDOMAINS: "single-label subdomains cannot be allowed"}


# Makes each guarded setting's check and change one step, so that two threads changing host flags
# cannot drop a strict flag that the check did not see.
_SETTINGS_LOCK = threading.Lock()


def _refused(what: str, why: str) -> PinningError:
    return PinningError(f"pinkeeper: chain and host name verification must stay on in a pinned context: {what} "
                        f"({why}); pins are checked on top of that verification, never instead of it")


class PinnedSSLContext(ssl.SSLContext):
    """An SSLContext whose client connections are checked against pins after verification.

    Its verification cannot be weakened: `check_hostname = False`, a `verify_mode` other than
    `CERT_REQUIRED` and a looser host-name check (`hostname_checks_common_name = True` once it
    was turned off, other such host flags) raise PinningError and leave the context as it was.
    urllib3's `assert_fingerprint` and `assert_hostname` and requests' `verify=False` make those
    changes, so they fail at once. Stricter settings (`verify_flags`, `hostname_checks_common_name
    = False`) are allowed. Going around this (the `ssl._SSLContext` descriptors) is caught when
    the handshake ends: a connection wrapped while verification was off is refused."""

    sslsocket_class = PinnedSSLSocket
    sslobject_class = PinnedSSLObject
    pin_reader: Optional[CacheReader] = None
    pin_common_name: Optional[str] = None

    @property
    def check_hostname(self):
        return ssl.SSLContext.check_hostname.__get__(self, type(self))

    @check_hostname.setter
    def check_hostname(self, value):
        if not value:
            raise _refused("check_hostname cannot be set to False",
                           "without it a pinned certificate of any other host would pass; urllib3's "
                           "assert_fingerprint and assert_hostname set it")
        with _SETTINGS_LOCK:
            ssl.SSLContext.check_hostname.__set__(self, True)

    @property
    def verify_mode(self):
        return ssl.SSLContext.verify_mode.__get__(self, type(self))

    @verify_mode.setter
    def verify_mode(self, value):
        if value != ssl.CERT_REQUIRED:
            raise _refused(f"verify_mode cannot be set to {_mode_name(value)}",
                           "without it the chain is whatever the server sent; requests' verify=False "
                           "and urllib3's cert_reqs='CERT_NONE' set it")
        with _SETTINGS_LOCK:
            ssl.SSLContext.verify_mode.__set__(self, ssl.CERT_REQUIRED)

    @property
    def _host_flags(self):
        return ssl.SSLContext._host_flags.__get__(self, type(self))

    @_host_flags.setter
    def _host_flags(self, value):
        # hostname_checks_common_name is set through here.
        with _SETTINGS_LOCK:
            current = self._host_flags
            reasons = [why for flag, why in _STRICT_HOST_FLAGS.items() if current & flag and not value & flag]
            reasons += [why for flag, why in _LOOSE_HOST_FLAGS.items() if value & flag and not current & flag]
            if reasons:
                raise _refused("the host name check cannot be loosened", "; ".join(reasons))
            ssl.SSLContext._host_flags.__set__(self, value)

    # OpenSSL copies verify_mode and the host check into each connection when it is made: record
    # whether they verified then (before and after, should anything change them meanwhile), for
    # check_connection to require at the end of the handshake.

    def _wrap_socket(self, *args, **kwargs):
        before = _verifies(self)
        wrapped = super()._wrap_socket(*args, **kwargs)
        _record(kwargs.get("owner"), before and _verifies(self))
        return wrapped

    def _wrap_bio(self, *args, **kwargs):
        before = _verifies(self)
        wrapped = super()._wrap_bio(*args, **kwargs)
        _record(kwargs.get("owner"), before and _verifies(self))
        return wrapped


def _record(owner, verified: bool) -> None:
    if owner is not None:
        owner._pinkeeper_verified_when_wrapped = verified


def _mode_name(value) -> str:
    try:
        return ssl.VerifyMode(value).name
    except (ValueError, TypeError):
        return repr(value)
