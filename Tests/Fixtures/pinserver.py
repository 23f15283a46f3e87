#!/usr/bin/env python3
"""Test fixture for pinkeeper: emulates Wultra's Mobile Utility Server (challenge mode) and static
fingerprint-list hosting over HTTPS on 127.0.0.1, plus a plain-HTTP twin listener so tests can
check that redirects to http:// are refused.

Each request path /NAME is described by DIR/NAME.json, re-read on every request so a test can
change the server's behaviour between two daemon requests (see README.md beside this file).
Signatures are made here with the `cryptography` package, an implementation independent of the
Swift code under test, so the daemon's verifier is checked against a second signer.
"""

import argparse
import base64
import binascii
import gzip
import hashlib
import json
import os
import re
import signal
import socket
import socketserver
import ssl
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec

CHALLENGE_HEADER = "X-Cert-Pinning-Challenge"
SIGNATURE_HEADER = "X-Cert-Pinning-Signature"
DEFAULT_LAST_MODIFIED = "Mon, 01 Jan 2024 00:00:00 GMT"
HANDSHAKE_TIMEOUT = 10   # a client that connects but never speaks TLS must not pin a thread
STREAM_CHUNK = 64 * 1024
KEEP_ALIVE_IDLE = 600    # --keep-alive: a test starved by a busy machine still finds its connection
BEHAVIORS = {"normal", "drip", "hang_after_headers", "hang_before_headers", "truncate",
             "oversize", "redirect", "redirect_loop"}
ROUTE_KEYS = {"mode", "signing_key", "fingerprints", "domainsConfig", "body", "body_b64",
              "signature_header_name", "signature_override", "sign_with", "status", "headers",
              "etag", "last_modified", "gzip", "behavior", "drip_interval", "hang_seconds",
              "oversize_bytes", "chunked", "location", "delay"}
SEGMENT = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._-]*")   # no "..", no hidden files: stay in DIR
STRICT_B64 = re.compile(r"[A-Za-z0-9+/]*={0,2}")


class FixtureError(Exception):
    """The route file itself is broken: a bug in the test, so it is answered 500 and printed."""


class State:
    """Everything both listeners share."""

    def __init__(self, routes_dir, verbose, keep_alive=False):
        self.routes_dir, self.verbose, self.keep_alive = routes_dir, verbose, keep_alive
        self.connections = 0  # numbers each accepted connection, for requests.log
        self.ports = {"https_port": 0, "http_port": 0}
        self.log_lock = threading.Lock()
        self.cache_lock = threading.Lock()
        # ECDSA is randomized: static bodies are cached per route text + key so that an
        # unchanged route is re-served byte for byte (needed for ETag / 304 tests).
        self.static_cache = {}


class Reply:
    def __init__(self, status, body=b"", kind="normal", content_type="application/json"):
        self.status, self.body, self.kind = status, body, kind
        self.headers = {"Content-Type": content_type} if content_type else {}


# ---------------------------------------------------------------- routes and keys

def route_file(routes_dir, url_path):
    """'/banking' -> ('banking', DIR/banking.json); nested '/app/init' -> DIR/app/init.json."""
    parts = url_path.strip("/").split("/")
    if not all(SEGMENT.fullmatch(p) for p in parts):
        return None, None
    return "/".join(parts), os.path.join(routes_dir, *parts) + ".json"


def load_route(path):
    try:
        with open(path, "rb") as f:
            text = f.read()
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return None, None
    try:
        route = json.loads(text)
    except ValueError as e:
        raise FixtureError(f"{path}: invalid JSON: {e}") from None
    if not isinstance(route, dict):
        raise FixtureError(f"{path}: top level must be an object")
    unknown = [k for k in route if k not in ROUTE_KEYS and not k.startswith("_")]
    if unknown:  # catches typos in tests early; "_comment"-style keys are allowed
        raise FixtureError(f"{path}: unknown keys {unknown}")
    return text, route


def load_key(routes_dir, path):
    """PEM P-256 private key (PKCS#8 or traditional); relative paths are relative to DIR."""
    if not isinstance(path, str):
        raise FixtureError(f"key path must be a string, got {path!r}")
    full = os.path.join(routes_dir, path)
    try:
        with open(full, "rb") as f:
            pem = f.read()
        key = serialization.load_pem_private_key(pem, password=None)
    except (OSError, ValueError, TypeError) as e:
        raise FixtureError(f"cannot load key {full}: {e}") from None
    if not isinstance(key, ec.EllipticCurvePrivateKey) or key.curve.name != "secp256r1":
        raise FixtureError(f"{full}: not a P-256 EC private key")
    return key, pem


def sign(key, data):
    # cryptography's ECDSA output is already DER SEQUENCE{r, s}, as Java SHA256withECDSA.
    return base64.b64encode(key.sign(data, ec.ECDSA(hashes.SHA256()))).decode()


def compact(doc):
    # Jackson-like compact UTF-8 JSON (non-ASCII names stay raw UTF-8).
    return json.dumps(doc, separators=(",", ":"), ensure_ascii=False).encode()


def error_body(code, message):
    return compact({"code": code, "message": message})


# ---------------------------------------------------------------- bodies

def entry_signed_bytes(entry):
    """docs/protocol.md §3: name & re-encoded standard base64 fingerprint & decimal seconds."""
    fp = entry["fingerprint"]
    try:
        fp = base64.b64encode(base64.b64decode(fp, validate=True)).decode()
    except (binascii.Error, ValueError, TypeError):
        pass  # undecodable fingerprint (malformed-list test): sign the text as given
    return f"{entry['name']}&{fp}&{entry['expires']}".encode()


def needs_signature(entry):
    # An explicit signature (even "" or garbage) goes out untouched; incomplete entries
    # (malformed-list tests) go out unsigned, the client must reject them at parsing anyway.
    return (isinstance(entry, dict) and "signature" not in entry
            and {"name", "fingerprint", "expires"} <= entry.keys())


def sign_entry(entry, key):
    if not needs_signature(entry):
        return entry
    return {**entry, "signature": sign(key, entry_signed_bytes(entry))}


def with_domains(doc, route):
    return {**doc, "domainsConfig": route["domainsConfig"]} if "domainsConfig" in route else doc


def static_body(route, text, state):
    entries = route.get("fingerprints", [])
    key, ident = None, hashlib.sha256(text)
    if isinstance(entries, list) and any(needs_signature(e) for e in entries):
        if route.get("signing_key") is None:
            raise FixtureError("static entries need signing but the route has no signing_key")
        key, pem = load_key(state.routes_dir, route["signing_key"])
        ident.update(b"\0" + pem)  # a rewritten key file at the same path must re-sign
    ident = ident.hexdigest()
    with state.cache_lock:
        if ident in state.static_cache:
            return state.static_cache[ident]
    if isinstance(entries, list):
        entries = [sign_entry(e, key) for e in entries]
    body = compact(with_domains({"fingerprints": entries}, route))
    with state.cache_lock:
        return state.static_cache.setdefault(ident, body)  # racing threads agree on one body


def route_body(route, text, state, mode):
    if "body" in route:
        return str(route["body"]).encode()
    if "body_b64" in route:  # bad base64 raises ValueError, reported as a fixture error
        return base64.b64decode(route["body_b64"], validate=True)
    if mode == "static":
        return static_body(route, text, state)
    # MUS AppInitResponse: timestamp first, entries without per-entry signatures.
    doc = {"timestamp": int(time.time()), "fingerprints": route.get("fingerprints", [])}
    return compact(with_domains(doc, route))


def oversize_body(route):
    size = int(route.get("oversize_bytes", 4 << 20))
    head, tail = b'{"fingerprints":[],"pad":"', b'"}'
    return head + b"x" * max(0, size - len(head) - len(tail)) + tail


# ---------------------------------------------------------------- request checks and decoration

def valid_challenge(value):
    """MUS HttpHeaders.validChallengeHeader: Java basic Base64 (padding optional), 16..32 bytes."""
    if not value or not STRICT_B64.fullmatch(value):
        return False
    if len(value) % 4 == 1 or ("=" in value and len(value) % 4):
        return False
    try:
        raw = base64.b64decode(value + "=" * (-len(value) % 4), validate=True)
    except binascii.Error:
        return False
    return 16 <= len(raw) <= 32


def add_signature(reply, route, challenge, state):
    name = route.get("signature_header_name", SIGNATURE_HEADER)
    if "signature_override" in route:  # JSON null: omit the header entirely
        if route["signature_override"] is not None:
            reply.headers[name] = str(route["signature_override"])
        return
    key_path = route.get("sign_with", route.get("signing_key"))
    if key_path is None:
        raise FixtureError("challenge route needs signing_key (or sign_with/signature_override)")
    key, _ = load_key(state.routes_dir, key_path)
    # docs/protocol.md §3: the challenge TEXT as received, '&', then the uncompressed body bytes.
    reply.headers[name] = sign(key, challenge.encode() + b"&" + reply.body)


def etag_matches(if_none_match, tag):
    if not if_none_match:
        return False
    candidates = [c.strip() for c in if_none_match.split(",")]
    return "*" in candidates or tag in [c[2:] if c.startswith("W/") else c for c in candidates]


def apply_etag(reply, route, request_headers):
    tag = '"%s"' % hashlib.sha256(reply.body).hexdigest()[:16]
    reply.headers["ETag"] = tag
    reply.headers["Last-Modified"] = route.get("last_modified", DEFAULT_LAST_MODIFIED)
    if 200 <= reply.status < 300 and etag_matches(request_headers.get("If-None-Match"), tag):
        reply.status, reply.body, reply.kind = 304, b"", "normal"
        reply.headers.pop("Content-Type", None)


def apply_gzip(reply, request_headers):
    if "gzip" in (request_headers.get("Accept-Encoding") or "").lower():
        reply.body = gzip.compress(reply.body, mtime=0)  # mtime=0: stable bytes
        reply.headers["Content-Encoding"] = "gzip"
        reply.headers["Vary"] = "Accept-Encoding"


def redirect_reply(route, behavior, request_path, state):
    if behavior == "redirect_loop":
        location = request_path  # relative reference back to the very same URL
    else:
        location = route.get("location")
        if not isinstance(location, str):
            raise FixtureError('behavior "redirect" needs a string "location"')
        for name, port in state.ports.items():
            location = location.replace("{%s}" % name, str(port))
    reply = Reply(int(route.get("status", 302)), content_type=None)
    reply.headers["Location"] = location
    return reply


def plan_reply(route, text, handler, state):
    """Decide everything about the response before anything is sent (so it can be logged)."""
    behavior = route.get("behavior", "normal")
    if behavior not in BEHAVIORS:
        raise FixtureError(f"unknown behavior {behavior!r}")
    if behavior in ("redirect", "redirect_loop"):
        return redirect_reply(route, behavior, handler.path, state)
    if behavior == "hang_before_headers":
        return Reply(None, kind=behavior)
    mode = route.get("mode", "challenge")
    if mode not in ("challenge", "static"):
        raise FixtureError(f"unknown mode {mode!r}")
    challenge = None
    if mode == "challenge":
        challenge = (handler.headers.get(CHALLENGE_HEADER) or "").strip(" \t")
        if not valid_challenge(challenge):  # MUS answers this unsigned
            return Reply(403, error_body("INVALID_CHALLENGE", "Invalid challenge header"))
    body = oversize_body(route) if behavior == "oversize" else route_body(route, text, state, mode)
    reply = Reply(int(route.get("status", 200)), body, kind=behavior)
    if route.get("etag"):
        apply_etag(reply, route, handler.headers)
    if challenge is not None and reply.status != 304:
        add_signature(reply, route, challenge, state)  # non-2xx is signed too, as MUS does
    if route.get("gzip") and reply.body:
        apply_gzip(reply, handler.headers)
    return reply


# ---------------------------------------------------------------- HTTP plumbing

class Handler(BaseHTTPRequestHandler):
    # HTTP/1.1 so chunked streaming is possible; every response says Connection: close
    # unless --keep-alive was given (then only the misbehaving replies close).
    protocol_version = "HTTP/1.1"
    server_version = "pinserver"
    timeout = 30
    abrupt = False  # set when the connection must die without a TLS close_notify

    def do_GET(self):
        self.close_connection = True  # one request per connection, even when nothing is sent
        state = self.server.state
        name, path = route_file(state.routes_dir, urlsplit(self.path).path)
        route = {}
        try:
            text, loaded = load_route(path) if path else (None, None)
            if loaded is None:
                reply = Reply(404, error_body("NOT_FOUND", f"no route for {self.path}"))
            else:
                route = loaded
                reply = plan_reply(route, text, self, state)
        except (FixtureError, ValueError, TypeError, AttributeError) as e:
            print(f"pinserver: route {name!r}: {e}", file=sys.stderr, flush=True)
            route, reply = {}, Reply(500, error_body("FIXTURE_ERROR", str(e)))
        reply.headers.update({k: str(v) for k, v in (route.get("headers") or {}).items()})
        self.record(name, reply.status)
        time.sleep(float(route.get("delay", 0)))
        self.close_connection = not (state.keep_alive and reply.kind == "normal")
        self.execute(reply, route)
        if not self.close_connection:
            self.connection.settimeout(KEEP_ALIVE_IDLE)

    do_POST = do_GET  # logged like GET so a test can assert the daemon never POSTs

    def record(self, name, status):
        """One JSON line per request in DIR/requests.log, written before any waiting."""
        headers = {}
        for k, v in self.headers.items():
            k = k.lower()
            headers[k] = f"{headers[k]}, {v}" if k in headers else v
        line = json.dumps({"time": time.time(), "path": self.path, "route": name,
                           "method": self.command, "scheme": self.server.scheme,
                           "connection": getattr(self.connection, "pk_number", 0),
                           "tls_resumed": getattr(self.connection, "session_reused", None),
                           "headers": headers, "status": status})
        state = self.server.state
        with state.log_lock, open(os.path.join(state.routes_dir, "requests.log"), "a") as f:
            f.write(line + "\n")

    def send_head(self, reply, length):
        self.send_response(reply.status)
        for k, v in reply.headers.items():
            self.send_header(k, v)
        if length:
            self.send_header("Content-Length", str(len(reply.body)))
        if not self.server.state.keep_alive or reply.kind != "normal":
            self.send_header("Connection", "close")
        self.end_headers()

    def execute(self, reply, route):
        hang = float(route.get("hang_seconds", 60))
        if reply.kind == "hang_before_headers":
            time.sleep(hang)
            self.abrupt = True
            return
        if reply.kind == "oversize":
            return self.stream(reply, bool(route.get("chunked")))
        self.send_head(reply, length=reply.status != 304)
        body = reply.body
        if reply.kind == "drip":
            interval = float(route.get("drip_interval", 1.0))
            for i in range(len(body)):
                self.wfile.write(body[i:i + 1])
                time.sleep(interval)
        elif reply.kind == "hang_after_headers":
            time.sleep(hang)
            self.abrupt = True
        elif reply.kind == "truncate":
            self.wfile.write(body[:len(body) // 2])
            self.abrupt = True
        else:
            self.wfile.write(body)

    def stream(self, reply, chunked):
        """No Content-Length: the client can only protect itself by limiting while reading."""
        if chunked:
            reply.headers["Transfer-Encoding"] = "chunked"
        self.send_head(reply, length=False)
        for off in range(0, len(reply.body), STREAM_CHUNK):
            part = reply.body[off:off + STREAM_CHUNK]
            self.wfile.write(b"%x\r\n%s\r\n" % (len(part), part) if chunked else part)
        if chunked:
            self.wfile.write(b"0\r\n\r\n")

    def version_string(self):
        return self.server_version

    def log_message(self, fmt, *args):
        if self.server.state.verbose:
            super().log_message(fmt, *args)


class FixtureServer(ThreadingHTTPServer):
    daemon_threads = True  # hanging handlers must not delay exit
    request_queue_size = 128  # socketserver's 5 drops connections a concurrent pass opens at once

    def __init__(self, port, state, scheme, tls=None, address="127.0.0.1"):
        self.state, self.scheme, self.tls = state, scheme, tls
        # Before the socket is made: ::1 needs an IPv6 one.
        self.address_family = socket.AF_INET6 if ":" in address else socket.AF_INET
        super().__init__((address, port), Handler)

    def server_bind(self):
        socketserver.TCPServer.server_bind(self)  # skip HTTPServer's reverse-DNS getfqdn()
        self.server_name, self.server_port = self.server_address[:2]

    def finish_request(self, request, client_address):
        if self.tls is None:
            return super().finish_request(request, client_address)
        # Handshake here, in the per-connection thread, not in accept(): a stalled or
        # rejecting client (untrusted-CA tests) must not block the listener.
        request.settimeout(HANDSHAKE_TIMEOUT)
        try:
            conn = self.tls.wrap_socket(request, server_side=True)
        except (ssl.SSLError, OSError) as e:
            if self.state.verbose:
                print(f"pinserver: TLS handshake failed: {e}", file=sys.stderr)
            return
        with self.state.log_lock:
            self.state.connections += 1
            conn.pk_number = self.state.connections
        try:
            handler = self.RequestHandlerClass(conn, client_address, self)
            if not handler.abrupt:
                conn.settimeout(1)
                conn.unwrap()  # close_notify, so close-delimited bodies end cleanly
        except (ssl.SSLError, OSError):
            pass
        finally:
            conn.close()

    def handle_error(self, request, client_address):
        if self.state.verbose:  # clients hanging up mid-drip are expected, keep quiet
            super().handle_error(request, client_address)


def write_atomic(path, text):
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(os.path.abspath(path)), prefix=".port.")
    with os.fdopen(fd, "w") as f:
        f.write(text)
    os.replace(tmp, path)  # readers never see a half-written port number


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--routes", required=True, help="directory of NAME.json route files")
    p.add_argument("--cert", required=True, help="server certificate (chain) PEM")
    p.add_argument("--key", required=True, help="server private key PEM")
    p.add_argument("--port", type=int, default=0, help="HTTPS port, 0 = ephemeral")
    p.add_argument("--address", default="127.0.0.1", help="loopback address of the HTTPS listener (127.0.0.1 or ::1)")
    p.add_argument("--port-file", help="where to write the HTTPS port once listening")
    p.add_argument("--http-port-file", help="where to write the plain-HTTP port")
    p.add_argument("--verbose", action="store_true", help="log requests and errors to stderr")
    p.add_argument("--keep-alive", action="store_true",
                   help="keep connections open after normal replies (connection reuse tests, benchmarks)")
    return p.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    state = State(os.path.abspath(args.routes), args.verbose, args.keep_alive)
    tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    tls.load_cert_chain(args.cert, args.key)
    servers = [FixtureServer(args.port, state, "https", tls, args.address), FixtureServer(0, state, "http")]
    state.ports.update(https_port=servers[0].server_address[1],
                       http_port=servers[1].server_address[1])
    stop = threading.Event()
    # A parent may hand us a blocked mask (Swift Testing does): SIGTERM would stay pending forever.
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT})
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    for server in servers:
        threading.Thread(target=server.serve_forever, args=(0.2,), daemon=True).start()
    # Both sockets listen since construction; the HTTPS port file is written last so that
    # its appearance means everything is ready.
    if args.http_port_file:
        write_atomic(args.http_port_file, str(state.ports["http_port"]))
    if args.port_file:
        write_atomic(args.port_file, str(state.ports["https_port"]))
    # A test process that dies without stopping us must not leave us running: once our
    # parent is gone we are re-parented, and we leave too.
    parent = os.getppid()
    while not stop.wait(0.5):
        if os.getppid() != parent:
            break
    for server in servers:
        server.shutdown()
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
