"""The TLS helpers against real TLS servers on loopback: plain ssl sockets, http.client,
urllib3, requests and httpx (sync and async). For each: a pinned server passes, an unpinned one
(same CA, same host name) fails, a pinned certificate served under the wrong host name fails on
the host name, a store without pins fails as `empty`, and a certificate whose common name is
not the host cannot use that name to escape the host's pinning (docs/protocol.md, "the host decides")."""

from __future__ import annotations

import _ssl
import asyncio
import hashlib
import http.client
import socket
import ssl
import types
from urllib.parse import urlsplit

import pytest

from pinkeeper import CacheReader, Verdict
from pinkeeper.tls import HAS_VERIFIED_CHAIN, PinningError, check_connection, pinned_context

from conftest import HOST, STORE, domains_config, issue, pin

X509_V_ERR_HOSTNAME_MISMATCH = 62


def causes(error):
    """Every exception reachable from `error` (causes, contexts, arguments, urllib3 reasons)."""
    seen, pending = [], [error]
    while pending:
        current = pending.pop()
        if not isinstance(current, BaseException) or any(current is s for s in seen):
            continue
        seen.append(current)
        pending += [current.__cause__, current.__context__, getattr(current, "reason", None), *current.args]
    return seen


def pinning_error(error) -> PinningError:
    found = [e for e in causes(error) if isinstance(e, PinningError)]
    assert found, f"no PinningError behind {error!r}"
    return found[0]


def hostname_mismatch(error) -> bool:
    return any(isinstance(e, ssl.SSLCertVerificationError) and not isinstance(e, PinningError)
               and e.verify_code == X509_V_ERR_HOSTNAME_MISMATCH for e in causes(error))


# One way per library to fetch a URL through the pinned context; each returns the body.

def fetch_socket(url, context):
    host, port = urlsplit(url).hostname, urlsplit(url).port
    with socket.create_connection(("127.0.0.1", port), timeout=10) as raw:
        with context.wrap_socket(raw, server_hostname=host) as tls:
            tls.sendall(f"GET / HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n".encode())
            data = b""
            while chunk := tls.recv(4096):
                data += chunk
    return data.split(b"\r\n\r\n", 1)[1]


def fetch_http_client(url, context):
    connection = http.client.HTTPSConnection(urlsplit(url).hostname, urlsplit(url).port, context=context, timeout=10)
    try:
        connection.request("GET", "/")
        return connection.getresponse().read()
    finally:
        connection.close()


def fetch_urllib3(url, context):
    urllib3 = pytest.importorskip("urllib3")
    with urllib3.PoolManager(ssl_context=context, retries=False, timeout=10) as pool:
        return pool.request("GET", url).data


def fetch_requests(url, context):
    requests = pytest.importorskip("requests")
    from pinkeeper.requests_adapter import PinnedHTTPAdapter
    with requests.Session() as session:
        session.mount("https://", PinnedHTTPAdapter(context.pin_reader, context=context))
        return session.get(url, timeout=10).content


def fetch_httpx(url, context):
    httpx = pytest.importorskip("httpx")
    with httpx.Client(verify=context, timeout=10) as client:
        return client.get(url).content


def fetch_httpx_async(url, context):
    httpx = pytest.importorskip("httpx")

    async def get():
        async with httpx.AsyncClient(verify=context, timeout=10) as client:
            return (await client.get(url)).content
    return asyncio.run(get())


CLIENTS = [fetch_socket, fetch_http_client, fetch_urllib3, fetch_requests, fetch_httpx, fetch_httpx_async]
BODY = b"hello from the pinned test server\n"


@pytest.fixture
def reader_for(cache_dir):
    def make(*pins, **metadata):
        cache_dir(*pins, **metadata)
        return CacheReader(STORE, cache_directory=cache_dir.directory)
    return make


@pytest.mark.parametrize("fetch", CLIENTS, ids=lambda f: f.__name__[6:])
class TestEveryClient:
    def test_pinned_server_passes(self, fetch, pki, serve, reader_for):
        server = serve(pki.pinned)
        reader = reader_for(pin(HOST, pki.pinned.fingerprint))
        assert fetch(server.url, pinned_context(reader, cafile=pki.ca_file)) == BODY

    def test_unpinned_server_fails(self, fetch, pki, serve, reader_for):
        server = serve(pki.unpinned)  # same CA, same host name: only the pin tells them apart
        reader = reader_for(pin(HOST, pki.pinned.fingerprint))
        with pytest.raises(Exception) as raised:
            fetch(server.url, pinned_context(reader, cafile=pki.ca_file))
        error = pinning_error(raised.value)
        assert error.verdict is Verdict.UNTRUSTED and error.common_name == HOST

    def test_pinned_certificate_under_the_wrong_host_name_fails(self, fetch, pki, serve, reader_for):
        # Pinned under its own CN: with host-name checking off (urllib3's assert_fingerprint) it would pass.
        server = serve(pki.wrong_name)
        reader = reader_for(pin("wrong.example.com", pki.wrong_name.fingerprint), pin(HOST, pki.pinned.fingerprint))
        with pytest.raises(Exception) as raised:
            fetch(server.url, pinned_context(reader, cafile=pki.ca_file))
        assert hostname_mismatch(raised.value), repr(raised.value)

    def test_store_without_pins_fails_as_empty(self, fetch, pki, serve, reader_for):
        server = serve(pki.pinned)
        reader = reader_for(pin("other.example.com", pki.pinned.fingerprint))
        with pytest.raises(Exception) as raised:
            fetch(server.url, pinned_context(reader, cafile=pki.ca_file))
        assert pinning_error(raised.value).verdict is Verdict.EMPTY


def test_untrusted_chain_fails_before_pins(pki, serve, reader_for, tmp_path):
    # A CA the client does not trust: normal verification refuses; pins never rescue a chain.
    server = serve(pki.pinned)
    other_root = tmp_path / "other-root.pem"
    other_root.write_bytes(pki.unrelated.pem)
    reader = reader_for(pin(HOST, pki.pinned.fingerprint))
    with pytest.raises(ssl.SSLCertVerificationError) as raised:
        fetch_socket(server.url, pinned_context(reader, cafile=str(other_root)))
    assert not isinstance(raised.value, PinningError)


def test_a_new_cache_version_applies_to_the_next_connection(pki, serve, cache_dir):
    server = serve(pki.pinned)
    cache_dir(pin(HOST, pki.unpinned.fingerprint))
    context = pinned_context(CacheReader(STORE, cache_directory=cache_dir.directory), cafile=pki.ca_file)
    with pytest.raises(PinningError):
        fetch_socket(server.url, context)
    cache_dir(pin(HOST, pki.pinned.fingerprint))  # the daemon publishes the new pin
    assert fetch_socket(server.url, context) == BODY


def settings(context):
    return context.verify_mode, context.check_hostname, context._host_flags, context.hostname_checks_common_name


def set_raw(context, check_hostname):
    """Sets check_hostname past the pinned context's guard, as the C attribute it is: what the
    context looked like, before the guard, while another thread had it turned off."""
    ssl.SSLContext.check_hostname.__set__(context, check_hostname)


def set_host_flag(flag, on):
    def change(context):
        context._host_flags = context._host_flags | flag if on else context._host_flags & ~flag
    return change


WEAKENING = {  # a change that weakens verification: what the refusal says
    "check_hostname-False": (lambda c: setattr(c, "check_hostname", False), "check_hostname cannot be set to False"),
    "check_hostname-0": (lambda c: setattr(c, "check_hostname", 0), "check_hostname cannot be set to False"),
    "verify_mode-CERT_NONE": (lambda c: setattr(c, "verify_mode", ssl.CERT_NONE), "verify_mode cannot be set to CERT_NONE"),
    "verify_mode-CERT_OPTIONAL": (lambda c: setattr(c, "verify_mode", ssl.CERT_OPTIONAL),
                                  "verify_mode cannot be set to CERT_OPTIONAL"),
    "common-name-fallback-back-on": (lambda c: setattr(c, "hostname_checks_common_name", True),
                                     "hostname_checks_common_name cannot be turned on"),
    "partial-wildcards": (set_host_flag(_ssl.HOSTFLAG_NO_PARTIAL_WILDCARDS, False), "partial wildcards"),
    "multi-label-wildcards": (set_host_flag(_ssl.HOSTFLAG_MULTI_LABEL_WILDCARDS, True), "multi-label"),
    "always-check-subject": (set_host_flag(_ssl.HOSTFLAG_ALWAYS_CHECK_SUBJECT, True), "common name cannot be checked"),
}


@pytest.mark.parametrize("change", WEAKENING, ids=list(WEAKENING))
def test_the_context_refuses_to_weaken_verification(change, pki, serve, reader_for):
    # OpenSSL takes these settings when a socket is wrapped, so a pinned context never lets them
    # go: turned off and on again around another thread's wrap_socket, they would pass an
    # unverified host that the check at the end of the handshake could not see.
    server = serve(pki.pinned)
    context = pinned_context(reader_for(pin(HOST, pki.pinned.fingerprint)), cafile=pki.ca_file)
    context.hostname_checks_common_name = False  # allowed: stricter; so that turning it on is a change
    before = settings(context)
    weaken, reason = WEAKENING[change]
    with pytest.raises(PinningError) as raised:
        weaken(context)
    message = str(raised.value)
    assert message.startswith("pinkeeper: ") and "must stay on" in message and reason in message, message
    assert isinstance(raised.value, ValueError) and raised.value.verdict is None
    assert settings(context) == before  # left as it was
    assert fetch_socket(server.url, context) == BODY


def test_the_context_allows_settings_that_keep_or_tighten_verification(pki, serve, reader_for):
    server = serve(pki.pinned)
    context = pinned_context(reader_for(pin(HOST, pki.pinned.fingerprint)), cafile=pki.ca_file)
    context.check_hostname = True
    context.verify_mode = ssl.CERT_REQUIRED  # urllib3 sets it on every connection
    context.hostname_checks_common_name = False
    context.hostname_checks_common_name = False
    context._host_flags |= _ssl.HOSTFLAG_NO_WILDCARDS
    context.verify_flags |= ssl.VERIFY_X509_STRICT
    assert settings(context)[:2] == (ssl.CERT_REQUIRED, True)
    assert fetch_socket(server.url, context) == BODY


def bio_handshake(context, port, host, before_handshake=lambda: None):
    """A client handshake through memory BIOs (the SSLObject path of asyncio and httpx.AsyncClient)."""
    incoming, outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
    tls = context.wrap_bio(incoming, outgoing, server_hostname=host)
    before_handshake()
    with socket.create_connection(("127.0.0.1", port), timeout=10) as raw:
        while True:
            try:
                tls.do_handshake()
                return tls
            except ssl.SSLWantReadError:
                if outgoing.pending:
                    raw.sendall(outgoing.read())
                data = raw.recv(65536)
                if not data:
                    raise ConnectionError("the server closed the connection during the handshake")
                incoming.write(data)


def socket_handshake(context, port, host, before_handshake=lambda: None):
    with socket.create_connection(("127.0.0.1", port), timeout=10) as raw:
        tls = context.wrap_socket(raw, server_hostname=host, do_handshake_on_connect=False)
        before_handshake()
        try:
            tls.do_handshake()
        finally:
            tls.close()


@pytest.mark.parametrize("handshake", [socket_handshake, bio_handshake], ids=["socket", "bio"])
def test_a_connection_wrapped_without_the_host_check_is_refused_when_it_is_back_on(handshake, pki, serve, reader_for):
    # The race of a shared context: one thread turns check_hostname off, another wraps a socket,
    # the first turns it on again before that handshake ends. OpenSSL never checks the host for
    # this connection; a check reading the context at the end would see it on. The store pins
    # the server's certificate under its CN, so only the host check stands in the way.
    server = serve(pki.wrong_name)
    context = pinned_context(reader_for(pin("wrong.example.com", pki.wrong_name.fingerprint)), cafile=pki.ca_file)
    set_raw(context, False)
    with pytest.raises(PinningError, match="must stay on.*off when this connection was set up"):
        handshake(context, server.port, HOST, before_handshake=lambda: set_raw(context, True))
    # With the host check on throughout, OpenSSL itself refuses the certificate for this host.
    with pytest.raises(ssl.SSLCertVerificationError) as raised:
        handshake(context, server.port, HOST)
    assert hostname_mismatch(raised.value)
    server.stop()
    assert server.paths == []


def test_requests_verify_false_is_refused(pki, serve, reader_for):
    requests = pytest.importorskip("requests")
    from pinkeeper.requests_adapter import PinnedHTTPAdapter
    server = serve(pki.pinned)
    context = pinned_context(reader_for(pin(HOST, pki.pinned.fingerprint)), cafile=pki.ca_file)
    with requests.Session() as session:
        session.mount("https://", PinnedHTTPAdapter(context.pin_reader, context=context))
        with pytest.raises(Exception) as raised:
            session.get(server.url, verify=False, timeout=10)
        assert "verify_mode cannot be set to CERT_NONE" in str(pinning_error(raised.value))
        assert settings(context)[:2] == (ssl.CERT_REQUIRED, True)
        assert session.get(server.url, timeout=10).content == BODY  # the shared context still verifies


@pytest.mark.parametrize("option", ["assert_fingerprint", "assert_hostname"])
def test_urllib3_options_that_turn_host_name_checking_off_are_refused(option, pki, serve, reader_for):
    # Both make urllib3 set check_hostname = False on the context; with assert_fingerprint a
    # pinned certificate for the wrong host would then pass. The pinned context refuses the
    # change itself, before any socket is wrapped, and stays as it was.
    urllib3 = pytest.importorskip("urllib3")
    server = serve(pki.wrong_name)
    reader = reader_for(pin("wrong.example.com", pki.wrong_name.fingerprint))
    context = pinned_context(reader, cafile=pki.ca_file)
    value = hashlib.sha256(pki.wrong_name.der).hexdigest() if option == "assert_fingerprint" else "wrong.example.com"
    with urllib3.PoolManager(ssl_context=context, retries=False, timeout=10, **{option: value}) as pool:
        with pytest.raises(Exception) as raised:
            pool.request("GET", server.url)
    message = str(pinning_error(raised.value))
    assert "must stay on" in message and "check_hostname cannot be set to False" in message, message
    assert (context.verify_mode, context.check_hostname) == (ssl.CERT_REQUIRED, True)
    server.stop()
    assert server.paths == []


def test_http_libraries_report_a_pinning_failure_as_a_tls_error(pki, serve, reader_for):
    requests, httpx = pytest.importorskip("requests"), pytest.importorskip("httpx")
    server = serve(pki.unpinned)
    context = pinned_context(reader_for(pin(HOST, pki.pinned.fingerprint)), cafile=pki.ca_file)
    with pytest.raises(requests.exceptions.SSLError):
        fetch_requests(server.url, context)
    with pytest.raises(httpx.ConnectError):
        fetch_httpx(server.url, context)


def test_no_byte_is_sent_before_the_pins_are_checked(pki, serve, reader_for):
    # With do_handshake_on_connect=False the first sendall would run the handshake inside
    # OpenSSL's write; the pinned socket handshakes and checks first, so the request never leaves.
    server = serve(pki.unpinned)
    context = pinned_context(reader_for(pin(HOST, pki.pinned.fingerprint)), cafile=pki.ca_file)
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as raw:
        tls = context.wrap_socket(raw, server_hostname=HOST, do_handshake_on_connect=False)
        for _ in range(2):  # and again: a failed check is not remembered as passed
            with pytest.raises(PinningError):
                tls.sendall(b"GET /secret HTTP/1.1\r\nHost: localhost\r\n\r\n")
        tls.close()
    server.stop()
    assert "/secret" not in server.paths


@pytest.mark.parametrize("fetch", [fetch_socket, fetch_httpx_async], ids=["socket", "httpx_async"])
def test_intermediate_pin_needs_the_verified_chain(fetch, pki, serve, reader_for):
    # Only the intermediate is pinned (depth 1). Python 3.13+ compares it with the verified
    # chain; before that the chain is unknown and the answer fails closed as `empty`.
    server = serve(pki.pinned)
    reader = reader_for(pin(HOST, pki.intermediate.fingerprint, depth=1))
    context = pinned_context(reader, cafile=pki.ca_file)
    if HAS_VERIFIED_CHAIN:
        assert fetch(server.url, context) == BODY
    else:
        with pytest.raises(Exception) as raised:
            fetch(server.url, context)
        assert pinning_error(raised.value).verdict is Verdict.EMPTY


def test_a_presented_but_unverified_certificate_never_matches(pki, serve, reader_for):
    # The server appends an unrelated CA certificate that the store pins at depth 2; it is in
    # what the server sent, not in the chain OpenSSL verified (leaf, intermediate, root).
    server = serve(pki.pinned, extra=[pki.unrelated])
    reader = reader_for(pin(HOST, pki.unrelated.fingerprint, depth=2), pin(HOST, pki.unpinned.fingerprint))
    with pytest.raises(PinningError) as raised:
        fetch_socket(server.url, pinned_context(reader, cafile=pki.ca_file))
    assert raised.value.verdict is Verdict.UNTRUSTED


@pytest.mark.skipif(not HAS_VERIFIED_CHAIN, reason="needs SSLSocket.get_verified_chain (Python 3.13+)")
def test_root_pin_at_depth_2_matches_the_verified_chain(pki, serve, reader_for):
    server = serve(pki.pinned)
    reader = reader_for(pin(HOST, pki.root.fingerprint, depth=2))
    assert fetch_socket(server.url, pinned_context(reader, cafile=pki.ca_file)) == BODY


# The host decides (docs/protocol.md). A certificate wrongly issued for API (in its SAN, so host-name
# verification passes) carries whatever common name its holder chose. Pins are looked up under the
# host the connection verified and under that CN; the CN can add pins to compare, never lift the
# host's requirement to match one.

API = "api.example.com"


@pytest.fixture(scope="module")
def leaf_for(pki):
    """A leaf from the test CA, valid for `host` (its only SAN), with the given common name."""
    issued = {}

    def make(common_name, host=API):
        if (common_name, host) not in issued:
            issued[common_name, host] = issue(common_name, pki.intermediate, dns_names=[host])
        return issued[common_name, host]
    return make


def refused(fetch, url, context, server):
    """Fetches expecting a PinningError; checks that the request never reached the server."""
    with pytest.raises(Exception) as raised:
        fetch(url, context)
    server.stop()  # waits for every handler: `paths` is complete
    assert server.paths == [], "the request was sent to an unpinned server"
    return pinning_error(raised.value)


@pytest.mark.parametrize("fetch", CLIENTS, ids=lambda f: f.__name__[6:])
class TestTheHostDecides:
    def test_a_common_name_exempt_from_pinning_does_not_exempt_the_host(self, fetch, pki, serve, reader_for,
                                                                        leaf_for, resolve):
        # The reported bypass: the signed domainsConfig requires pinning for API and for no
        # unlisted name; the rogue leaf names itself unlisted.example. Looked up under its CN
        # alone, it was `trusted` and the request went out.
        resolve({API})
        server = serve(leaf_for("unlisted.example"))
        reader = reader_for(pin(API, leaf_for(API).fingerprint), mode="challenge",
                            domains_config=domains_config(False, {API: True}))
        error = refused(fetch, server.url_for(API), pinned_context(reader, cafile=pki.ca_file), server)
        assert error.verdict is Verdict.UNTRUSTED
        assert (error.host, error.common_name) == (API, "unlisted.example")
        assert all(part in str(error) for part in (f"'{STORE}'", f"'{API}'", "'unlisted.example'")), str(error)

    def test_pins_under_the_host_match_a_leaf_with_another_common_name(self, fetch, pki, serve, reader_for,
                                                                       leaf_for, resolve):
        # A load balancer's leaf valid for API but named gw-7.internal.example: pinned under the
        # host the client asked for, it passes (looked up under its CN alone it was `empty`).
        resolve({API})
        leaf = leaf_for("gw-7.internal.example")
        server = serve(leaf)
        reader = reader_for(pin(API, leaf.fingerprint))
        assert fetch(server.url_for(API), pinned_context(reader, cafile=pki.ca_file)) == BODY


def test_a_common_name_listed_as_not_required_does_not_exempt_the_host(pki, serve, reader_for, leaf_for, resolve):
    resolve({API})
    server = serve(leaf_for("static.example.com"))
    reader = reader_for(pin(API, leaf_for(API).fingerprint), mode="challenge",
                        domains_config=domains_config(True, {API: True, "static.example.com": False}))
    error = refused(fetch_socket, server.url_for(API), pinned_context(reader, cafile=pki.ca_file), server)
    assert error.verdict is Verdict.UNTRUSTED


def test_a_common_name_pinned_to_another_certificate_does_not_match(pki, serve, reader_for, leaf_for, resolve):
    # pay.example.com's pins are compared too (the leaf claims that name), but they pin another certificate.
    resolve({API})
    server = serve(leaf_for("pay.example.com"))
    reader = reader_for(pin(API, leaf_for(API).fingerprint), pin("pay.example.com", pki.pinned.fingerprint))
    error = refused(fetch_socket, server.url_for(API), pinned_context(reader, cafile=pki.ca_file), server)
    assert error.verdict is Verdict.UNTRUSTED and error.common_name == "pay.example.com"


def test_pinning_is_skipped_only_when_neither_name_requires_it(pki, serve, reader_for, leaf_for, resolve):
    resolve({API})
    server = serve(leaf_for("www.example.com"))
    exempt = {API: False, "www.example.com": False}
    reader = reader_for(pin(API, leaf_for(API).fingerprint), mode="challenge", domains_config=domains_config(True, exempt))
    assert fetch_socket(server.url_for(API), pinned_context(reader, cafile=pki.ca_file)) == BODY
    # The same list in a static-mode file is not covered by a signature: ignored, pins apply.
    reader = reader_for(pin(API, leaf_for(API).fingerprint), mode="static", domains_config=domains_config(True, exempt))
    with pytest.raises(PinningError):
        fetch_socket(server.url_for(API), pinned_context(reader, cafile=pki.ca_file))


def test_the_verified_host_compares_ignoring_ascii_case(pki, serve, reader_for, leaf_for):
    # OpenSSL matched the SAN ignoring case; the pins, listed under api.example.com, do too.
    leaf = leaf_for("gw-7.internal.example")
    server = serve(leaf)
    context = pinned_context(reader_for(pin(API, leaf.fingerprint)), cafile=pki.ca_file)
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as raw:
        with context.wrap_socket(raw, server_hostname="API.Example.COM") as tls:
            assert tls.server_hostname == "API.Example.COM"


def test_expected_names_admit_the_host_or_the_common_name(pki, serve, cache_dir, leaf_for, resolve):
    resolve({API})
    leaf = leaf_for("gw-7.internal.example")
    server = serve(leaf)
    cache_dir(pin(API, leaf.fingerprint))
    for expected in ([API], ["gw-7.internal.example"]):
        reader = CacheReader(STORE, cache_directory=cache_dir.directory, expected_common_names=expected)
        assert fetch_socket(server.url_for(API), pinned_context(reader, cafile=pki.ca_file)) == BODY
    reader = CacheReader(STORE, cache_directory=cache_dir.directory, expected_common_names=["www.example.com"])
    with pytest.raises(PinningError, match="is not among the expected_common_names") as raised:
        fetch_socket(server.url_for(API), pinned_context(reader, cafile=pki.ca_file))
    assert raised.value.verdict is Verdict.UNTRUSTED


def test_the_context_common_name_replaces_the_leafs_but_never_the_host(pki, serve, reader_for, leaf_for, resolve):
    resolve({API})
    rogue = serve(leaf_for("unlisted.example"))
    reader = reader_for(pin(API, leaf_for(API).fingerprint), mode="challenge",
                        domains_config=domains_config(False, {API: True}))
    # An exempt name given to the context exempts no more than an exempt CN does.
    with pytest.raises(PinningError):
        fetch_socket(rogue.url_for(API), pinned_context(reader, cafile=pki.ca_file, common_name="unlisted.example"))
    # The operator's name stands in for the leaf's CN: its pins are compared.
    leaf = leaf_for("gw-7.internal.example")
    server = serve(leaf)
    reader = reader_for(pin("operator.example", leaf.fingerprint))
    with pytest.raises(PinningError) as raised:
        fetch_socket(server.url_for(API), pinned_context(reader, cafile=pki.ca_file))
    assert raised.value.verdict is Verdict.EMPTY
    context = pinned_context(reader, cafile=pki.ca_file, common_name="operator.example")
    assert fetch_socket(server.url_for(API), context) == BODY


def test_a_connection_without_a_verified_host_name_is_refused(pki, serve, reader_for):
    server = serve(pki.pinned)
    reader = reader_for(pin(HOST, pki.pinned.fingerprint))
    # No server_hostname and check_hostname off (past the context's guard): nothing says which
    # host the chain is for.
    context = pinned_context(reader, cafile=pki.ca_file)
    set_raw(context, False)
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as raw:
        with pytest.raises(PinningError, match="must stay on"):
            context.wrap_socket(raw, server_hostname=None)
    # With check_hostname on, Python itself refuses a connection that names no host.
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as raw:
        with pytest.raises(ValueError, match="server_hostname"):
            pinned_context(reader, cafile=pki.ca_file).wrap_socket(raw)
    server.stop()
    assert server.paths == []


def test_check_connection_refuses_a_connection_that_names_no_host(cache_dir, pki):
    # Should a connection object report verification on but no host name, the check must not
    # fall back to the certificate's own common name.
    cache_dir(pin(HOST, pki.pinned.fingerprint))
    reader = CacheReader(STORE, cache_directory=cache_dir.directory)
    context = types.SimpleNamespace(verify_mode=ssl.CERT_REQUIRED, check_hostname=True)
    for host in (None, ""):
        connection = types.SimpleNamespace(context=context, server_side=False, server_hostname=host,
                                           getpeercert=lambda binary_form=False: pki.pinned.der if binary_form else
                                           {"subject": ((("commonName", HOST),),)})
        with pytest.raises(PinningError, match="no server_hostname") as raised:
            check_connection(connection, reader)
        assert raised.value.verdict is Verdict.UNTRUSTED and f"'{STORE}'" in str(raised.value)


# Attack 1 (docs/protocol.md, "H in one spelling"): OpenSSL matches an IP certificate for any
# spelling of its address (0000::1 is ::1; it reads 127.000.000.001 as 127.0.0.1). The signed
# domainsConfig requires pinning for 127.0.0.1 and ::1 and for no unlisted name, and the store pins
# another certificate there. A reader that looked up the spelling as typed found an unlisted name
# (not required: trusted) and the request went out to the unpinned server.

ADDRESSES = ("127.0.0.1", "::1")
SPELLINGS = [("::1", "0:0:0:0:0:0:0:1"), ("::1", "::0:1"), ("::1", "0000::1"),
             ("127.0.0.1", "127.000.000.001"), ("127.0.0.1", "127.0.0.01")]
REFUSED = {"127.000.000.001", "127.0.0.01"}  # spellings with no one form: refused, never looked up


@pytest.fixture(scope="module")
def address_leaf(pki):
    """A leaf valid for one loopback address (an IP SAN) and named by an unlisted common name."""
    return {address: issue("unlisted.example", pki.intermediate, ip_addresses=[address]) for address in ADDRESSES}


def address_reader(reader_for, pinned):
    return reader_for(*(pin(address, pinned.fingerprint) for address in ADDRESSES), mode="challenge",
                      domains_config=domains_config(False, {address: True for address in ADDRESSES}))


def fetch_spelled(context, address, port, spelling):
    """A request over a TLS connection to `address` whose verified host is `spelling`."""
    with socket.create_connection((address, port), timeout=10) as raw:
        with context.wrap_socket(raw, server_hostname=spelling) as tls:
            tls.sendall(f"GET /secret HTTP/1.1\r\nHost: {spelling}\r\nConnection: close\r\n\r\n".encode())
            return tls.recv(4096)


def fetch_spelled_http_client(context, address, port, spelling):
    connection = http.client.HTTPSConnection(spelling, port, context=context, timeout=10)
    try:
        connection.request("GET", "/secret")
        return connection.getresponse().read()
    finally:
        connection.close()


@pytest.mark.parametrize("fetch", [fetch_spelled, fetch_spelled_http_client], ids=["socket", "http_client"])
@pytest.mark.parametrize("address, spelling", SPELLINGS, ids=[spelling for _, spelling in SPELLINGS])
def test_another_spelling_of_a_pinned_address_is_refused_before_any_data(fetch, address, spelling, pki, serve,
                                                                          reader_for, address_leaf):
    server = serve(address_leaf[address], address=address)
    context = pinned_context(address_reader(reader_for, pki.pinned), cafile=pki.ca_file)
    with pytest.raises(PinningError) as raised:
        fetch(context, address, server.port, spelling)
    server.stop()
    assert server.paths == [], "the request was sent to an unpinned server"
    error = raised.value
    assert error.verdict is Verdict.UNTRUSTED
    if spelling in REFUSED:
        assert error.host == spelling and "has no one spelling" in str(error), str(error)
    else:
        # Looked up under the address itself: its pins and its domainsConfig entry apply.
        assert (error.host, error.common_name) == (address, "unlisted.example")
        assert f"the certificate of '{address}' (certificate common name 'unlisted.example') is not pinned" in str(error)


@pytest.mark.parametrize("address, spelling", SPELLINGS, ids=[spelling for _, spelling in SPELLINGS])
def test_the_stack_verified_the_spelling_as_the_address(address, spelling, pki, serve, reader_for, address_leaf):
    # The attack is real: the TLS stack alone accepts each spelling for the address's certificate,
    # so only the pins stand in the way. (A plain context, with the same CA.)
    server = serve(address_leaf[address], address=address)
    context = ssl.create_default_context(cafile=pki.ca_file)
    assert fetch_spelled(context, address, server.port, spelling).startswith(b"HTTP/1.0 200")


def test_an_address_spelled_otherwise_finds_its_own_pins(pki, serve, reader_for, address_leaf):
    # The same spellings pass when the served certificate is the one pinned under the address
    # (and every name requires pinning: looked up as typed, they found no pin and were refused).
    for address, spelling in SPELLINGS:
        if spelling in REFUSED:
            continue
        server = serve(address_leaf[address], address=address)
        reader = reader_for(pin(address, address_leaf[address].fingerprint), mode="challenge",
                            domains_config=domains_config(True, {}))
        assert fetch_spelled(pinned_context(reader, cafile=pki.ca_file), address, server.port,
                             spelling).startswith(b"HTTP/1.0 200")


URL_SPELLINGS = [("::1", "[0:0:0:0:0:0:0:1]"), ("::1", "[::0:1]"), ("::1", "[0000::1]"),
                 ("127.0.0.1", "127.000.000.001"), ("127.0.0.1", "127.0.0.01")]


@pytest.mark.parametrize("fetch", CLIENTS[2:], ids=lambda f: f.__name__[6:])
@pytest.mark.parametrize("address, spelling", URL_SPELLINGS, ids=[spelling for _, spelling in URL_SPELLINGS])
def test_http_libraries_refuse_another_spelling_of_a_pinned_address(fetch, address, spelling, pki, serve, reader_for,
                                                                     address_leaf):
    # The same attack through a URL: urllib3 and requests hand the spelling to the TLS stack as
    # it is, and the pinned context refuses; httpx refuses a padded IPv4 URL itself.
    server = serve(address_leaf[address], address=address)
    context = pinned_context(address_reader(reader_for, pki.pinned), cafile=pki.ca_file)
    with pytest.raises(Exception) as raised:
        fetch(f"https://{spelling}:{server.port}/secret", context)
    server.stop()
    assert server.paths == [], "the request was sent to an unpinned server"
    if fetch in (fetch_httpx, fetch_httpx_async) and spelling in REFUSED:
        assert type(raised.value).__name__ == "InvalidURL" and "Invalid IPv4 address" in str(raised.value)
        return
    error = pinning_error(raised.value)
    assert error.verdict is Verdict.UNTRUSTED
    assert ("has no one spelling" in str(error)) if spelling in REFUSED else (error.host == address), str(error)
