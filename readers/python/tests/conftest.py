"""Test PKI made at test time with `cryptography` (an implementation independent of the reader),
real TLS servers on loopback, and cache files written the way the daemon writes them."""

from __future__ import annotations

import base64
import datetime
import hashlib
import http.server
import ipaddress
import json
import os
import socket
import ssl
import threading
from dataclasses import dataclass
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

STORE = "banking"
HOST = "localhost"


@dataclass
class Issued:
    certificate: x509.Certificate
    key: ec.EllipticCurvePrivateKey

    @property
    def der(self) -> bytes:
        return self.certificate.public_bytes(serialization.Encoding.DER)

    @property
    def pem(self) -> bytes:
        return self.certificate.public_bytes(serialization.Encoding.PEM)

    @property
    def fingerprint(self) -> str:
        return base64.b64encode(hashlib.sha256(self.der).digest()).decode()


def issue(common_name, issuer=None, ca=False, dns_names=(), ip_addresses=()):
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.ORGANIZATION_NAME, "pinkeeper tests"),
                         x509.NameAttribute(NameOID.COMMON_NAME, common_name)])
    now = datetime.datetime.now(datetime.timezone.utc)
    signer = issuer or Issued(None, key)
    builder = (x509.CertificateBuilder()
               .subject_name(subject)
               .issuer_name(issuer.certificate.subject if issuer else subject)
               .public_key(key.public_key())
               .serial_number(x509.random_serial_number())
               .not_valid_before(now - datetime.timedelta(hours=1))
               .not_valid_after(now + datetime.timedelta(days=2))
               .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
               .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
               .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(signer.key.public_key()), critical=False))
    alternative_names = ([x509.DNSName(name) for name in dns_names]
                         + [x509.IPAddress(ipaddress.ip_address(address)) for address in ip_addresses])
    if ca:
        builder = builder.add_extension(x509.KeyUsage(digital_signature=False, content_commitment=False,
                                                      key_encipherment=False, data_encipherment=False,
                                                      key_agreement=False, key_cert_sign=True, crl_sign=True,
                                                      encipher_only=False, decipher_only=False), critical=True)
    else:
        builder = (builder
                   .add_extension(x509.SubjectAlternativeName(alternative_names), critical=False)
                   .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
                   .add_extension(x509.KeyUsage(digital_signature=True, content_commitment=False,
                                                key_encipherment=False, data_encipherment=False,
                                                key_agreement=False, key_cert_sign=False, crl_sign=False,
                                                encipher_only=False, decipher_only=False), critical=True))
    return Issued(builder.sign(signer.key, hashes.SHA256()), key)


@dataclass
class PKI:
    directory: Path
    root: Issued
    intermediate: Issued
    pinned: Issued        # CN and SAN localhost: the server the store pins
    unpinned: Issued      # also localhost, same CA, not pinned
    wrong_name: Issued    # pinned under its own CN, but valid only for wrong.example.com
    unrelated: Issued     # a CA certificate a hostile server may append to what it presents

    @property
    def ca_file(self) -> str:
        return str(self.directory / "root.pem")

    def server_files(self, leaf: Issued, extra=()):
        """certificate chain file and key file for a server presenting leaf, intermediate, extra."""
        name = hashlib.sha256(leaf.der + b"".join(e.der for e in extra)).hexdigest()[:12]
        chain, key = self.directory / f"{name}.pem", self.directory / f"{name}.key"
        chain.write_bytes(leaf.pem + self.intermediate.pem + b"".join(e.pem for e in extra))
        key.write_bytes(leaf.key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                               serialization.NoEncryption()))
        return str(chain), str(key)


@pytest.fixture(scope="session")
def pki(tmp_path_factory) -> PKI:
    directory = tmp_path_factory.mktemp("pki")
    root = issue("pinkeeper Test Root", ca=True)
    intermediate = issue("pinkeeper Test Intermediate", issuer=root, ca=True)
    pki = PKI(directory, root, intermediate,
              pinned=issue(HOST, intermediate, dns_names=[HOST]),
              unpinned=issue(HOST, intermediate, dns_names=[HOST]),
              wrong_name=issue("wrong.example.com", intermediate, dns_names=["wrong.example.com"]),
              unrelated=issue("Unrelated CA", ca=True))
    (directory / "root.pem").write_bytes(root.pem)
    return pki


class _Handler(http.server.BaseHTTPRequestHandler):
    timeout = 10  # a client that never sends cannot hold the server's stop

    def do_GET(self):
        self.server.paths.append(self.path)
        body = b"hello from the pinned test server\n"
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


class _QuietServer(http.server.ThreadingHTTPServer):
    daemon_threads = False  # server_close() waits for every handler: `paths` is complete after stop()

    def handle_error(self, request, client_address):
        pass  # clients that refuse the server's certificate drop the connection: expected here


class _QuietServer6(_QuietServer):
    address_family = socket.AF_INET6


class TLSServer:
    """An HTTPS server on 127.0.0.1 (or another loopback address) presenting a given chain; stops
    with the test. `paths` lists every request that arrived."""

    def __init__(self, certfile: str, keyfile: str, address: str = "127.0.0.1"):
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(certfile, keyfile)
        self.address = address
        self.httpd = (_QuietServer6 if ":" in address else _QuietServer)((address, 0), _Handler)
        self.httpd.socket = context.wrap_socket(self.httpd.socket, server_side=True)
        self.httpd.paths = []
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()

    @property
    def paths(self):
        return self.httpd.paths

    @property
    def url(self) -> str:
        return self.url_for(HOST)

    def url_for(self, host: str) -> str:
        """A URL naming `host` (resolve it to loopback with the `resolve` fixture)."""
        return f"https://{host}:{self.port}/"

    def stop(self):
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=5)


@pytest.fixture
def serve(pki):
    servers = []

    def start(leaf: Issued, extra=(), address="127.0.0.1"):
        server = TLSServer(*pki.server_files(leaf, extra), address=address)
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stop()


def replace(path: Path, content: bytes) -> None:
    """As the daemon publishes: a temporary file renamed over the cache file (a new inode)."""
    temporary = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    temporary.write_bytes(content)
    os.rename(temporary, path)


def cache_document(pins, store=STORE, domains_config=None, **metadata):
    meta = {"format": 1, "store": store, "source": "https://pins.example.com/list",
            "updated": 1763770000, "nextUpdate": 1764374800}
    meta.update(metadata)
    document = {"fingerprints": pins, "pinkeeper": meta}
    if domains_config is not None:
        document["domainsConfig"] = domains_config
    return document


def domains_config(required_for_unlisted, required):
    """A `domainsConfig` object; `required` maps each listed name to its sslPinningRequired."""
    return {"sslPinningRequiredForUnlisted": required_for_unlisted,
            "domains": [{"name": name, "sslPinningRequired": value} for name, value in required.items()]}


def pin(name, fingerprint, expires=4102444800, depth=0):
    entry = {"name": name, "fingerprint": fingerprint, "expires": expires}
    if depth:
        entry["depth"] = depth
    return entry


@pytest.fixture
def resolve(monkeypatch):
    """Makes the given host names resolve to 127.0.0.1 for every client (they all end in
    socket.getaddrinfo), so that a URL can carry the host a certificate was issued for."""
    original = socket.getaddrinfo
    names = set()

    def getaddrinfo(host, *args, **kwargs):
        # anyio (httpx.AsyncClient) passes the name IDNA-encoded, as bytes.
        name = host.decode("ascii") if isinstance(host, bytes) else host
        return original("127.0.0.1" if name in names else host, *args, **kwargs)
    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    return names.update


@pytest.fixture
def cache_dir(tmp_path):
    """A cache directory and a function that publishes the store's pins into it."""
    path = tmp_path / f"{STORE}.json"

    def publish(*pins, **metadata):
        replace(path, json.dumps(cache_document(list(pins), **metadata)).encode())
        return path

    publish.directory = str(tmp_path)
    publish.path = path
    return publish
