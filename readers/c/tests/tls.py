#!/usr/bin/env python3
"""libpinkeeper's TLS helpers on loopback, with a CA made here by the openssl command: tls_probe
(pk_ssl_enforce) against openssl s_server, and the two examples (pk_ssl_ctx_enforce and
pk_curl_ssl_ctx_function) against an HTTPS server that logs every request. A pinned chain gets
its request through; an unpinned certificate, a certificate whose common name the store exempts,
an address spelt another way and a connection with no host are refused before any request.

usage: tls.py BUILD_DIRECTORY   (tls_probe, pinned-get-openssl and pinned-get-curl in it)"""

import base64
import hashlib
import os
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
failures = 0


def openssl(*arguments):
    subprocess.run(["openssl"] + list(arguments), check=True, capture_output=True)


def make_certificates(directory):
    """ca.pem, and pinned, other and rogue leaves for localhost, 127.0.0.1 and ::1."""
    path = lambda name: os.path.join(directory, name)
    openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", path("ca.key"),
            "-out", path("ca.pem"), "-days", "2", "-subj", "/CN=pinkeeper C reader test CA",
            "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign")
    with open(path("leaf.ext"), "w") as extensions:
        extensions.write("subjectAltName=DNS:localhost,IP:127.0.0.1,IP:::1\nbasicConstraints=CA:FALSE\n")
    fingerprints = {}
    for name, common_name in (("pinned", "localhost"), ("other", "localhost"), ("rogue", "exempt.example")):
        openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", path(name + ".key"),
                "-out", path(name + ".csr"), "-subj", "/CN=" + common_name)
        openssl("x509", "-req", "-in", path(name + ".csr"), "-CA", path("ca.pem"), "-CAkey", path("ca.key"), "-set_serial",
                str(len(fingerprints) + 2), "-days", "2", "-extfile", path("leaf.ext"), "-out", path(name + ".pem"))
        der = subprocess.run(["openssl", "x509", "-in", path(name + ".pem"), "-outform", "DER"], check=True, capture_output=True).stdout
        fingerprints[name] = base64.b64encode(hashlib.sha256(der).digest()).decode()
    return fingerprints


def write_cache(directory, fingerprints):
    """The store pins the pinned leaf under all three spellings of the host it serves; pinning is
    required for them and not for other names, and exempt.example (the rogue's CN) needs none."""
    import json
    pins = [{"name": name, "fingerprint": fingerprints["pinned"], "expires": int(time.time()) + 86400}
            for name in ("localhost", "127.0.0.1", "::1")]
    domains = [{"name": name, "sslPinningRequired": True} for name in ("localhost", "127.0.0.1", "::1")]
    domains.append({"name": "exempt.example", "sslPinningRequired": False})
    cache = {"fingerprints": pins, "domainsConfig": {"sslPinningRequiredForUnlisted": False, "domains": domains},
             "pinkeeper": {"format": 1, "store": "banking", "source": "https://pins.example.com/", "updated": 1, "nextUpdate": 2}}
    with open(os.path.join(directory, "banking.json"), "w") as out:
        json.dump(cache, out)


def free_port():
    """A port free on both 127.0.0.1 and ::1."""
    while True:
        with socket.socket(socket.AF_INET) as four:
            four.bind(("127.0.0.1", 0))
            port = four.getsockname()[1]
            try:
                with socket.socket(socket.AF_INET6) as six:
                    six.bind(("::1", port))
                    return port
            except OSError:
                continue


def wait_for(port, family=socket.AF_INET, address="127.0.0.1"):
    for _ in range(100):
        try:
            with socket.create_connection((address, port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError("no server on port %d" % port)


def check(label, command, want_status, want_text, log=None):
    """Runs a client; with log, a refused client must have sent no request."""
    global failures
    before = open(log).read() if log and os.path.exists(log) else ""
    result = subprocess.run(command, capture_output=True, text=True, timeout=30)
    after = open(log).read() if log and os.path.exists(log) else ""
    output = result.stdout + result.stderr
    problems = []
    if result.returncode != want_status:
        problems.append("status %d, want %d" % (result.returncode, want_status))
    if want_text not in result.stdout:
        problems.append("no %r in its output" % want_text)
    if want_status != 0 and result.stdout.count("\n") != 1:
        problems.append("a refusal must be one line")
    if log and want_status != 0 and after != before:
        problems.append("the server received a request: %r" % after[len(before):])
    if log and want_status == 0 and after == before:
        problems.append("the server received no request")
    if problems:
        failures += 1
        print("FAIL %s: %s\n  %s" % (label, "; ".join(problems), output.strip().replace("\n", "\n  ")))
    else:
        print("ok   %s" % label)


def s_server(directory, name, port):
    return subprocess.Popen(["openssl", "s_server", "-accept", "127.0.0.1:%d" % port, "-cert", os.path.join(directory, name + ".pem"),
                             "-key", os.path.join(directory, name + ".key"), "-www", "-quiet"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)


def https_server(directory, name, port):
    log = os.path.join(directory, name + ".log")
    process = subprocess.Popen([sys.executable, os.path.join(HERE, "https_server.py"), os.path.join(directory, name + ".pem"),
                                os.path.join(directory, name + ".key"), str(port), log], stdout=subprocess.PIPE, stdin=subprocess.DEVNULL)
    process.stdout.readline()
    return process, log


def probe_cases(build, directory, cache):
    """pk_ssl_enforce against openssl s_server (IPv4)."""
    probe = os.path.join(build, "tls_probe")
    ca = os.path.join(directory, "ca.pem")
    servers = {}
    try:
        for name in ("pinned", "other", "rogue"):
            port = free_port()
            servers[name] = (s_server(directory, name, port), port)
            wait_for(port)
        ask = lambda name, *mode: [probe, "127.0.0.1", str(servers[name][1]), ca, cache, "banking"] + list(mode)
        check("s_server: pinned, host by name", ask("pinned", "name", "localhost"), 0, "answered: HTTP/1.0 200 ok")
        check("s_server: pinned, host by address", ask("pinned", "ip", "127.0.0.1"), 0, "answered: HTTP/1.0 200 ok")
        check("s_server: pinned, no host", ask("pinned", "none"), 1, "refused: store 'banking': no host")
        check("s_server: unpinned", ask("other", "name", "localhost"), 1, "untrusted: store 'banking'")
        check("s_server: unpinned, by address", ask("other", "ip", "127.0.0.1"), 1, "untrusted: store 'banking'")
        check("s_server: exempt common name", ask("rogue", "name", "localhost"), 1, "untrusted: store 'banking'")
        check("s_server: the host name must verify", ask("pinned", "name", "exempt.example"), 1, "refused: ")
        check("s_server: an error let pass is no verified chain", ask("pinned", "lenient", "exempt.example"), 1,
              "refused: store 'banking': the chain was accepted with an error")
    finally:
        for process, _ in servers.values():
            process.terminate()
            process.wait()


def example_cases(build, directory, cache):
    """The examples (pk_ssl_ctx_enforce, pk_curl_ssl_ctx_function) against the HTTPS server."""
    ca = os.path.join(directory, "ca.pem")
    servers = {}
    try:
        for name in ("pinned", "other", "rogue"):
            port = free_port()
            servers[name] = https_server(directory, name, port) + (port,)
        probe = os.path.join(build, "tls_probe")
        other_process, other_log, other_port = servers["other"]
        check("probe: ::1 spelt 0:0:0:0:0:0:0:1, unpinned", [probe, "::1", str(other_port), ca, cache, "banking", "ip",
                                                             "0:0:0:0:0:0:0:1"], 1, "untrusted: store 'banking'", other_log)
        for example in ("openssl", "curl"):
            program = os.path.join(build, "pinned-get-" + example)
            get = lambda name, host="localhost": [program, "--cache-directory", cache, "--store", "banking", "--cacert", ca,
                                                  "https://%s:%d/hello" % (host, servers[name][2])]
            check(example + ": pinned", get("pinned"), 0, "body of pinned.pem", servers["pinned"][1])
            check(example + ": unpinned", get("other"), 1, "refused: ", servers["other"][1])
            check(example + ": exempt common name", get("rogue"), 1, "refused: ", servers["rogue"][1])
            if example == "openssl":
                check("openssl: pinned at [::1]", get("pinned", "[::1]"), 0, "body of pinned.pem", servers["pinned"][1])
                check("openssl: unpinned at [0:0:0:0:0:0:0:1]", get("other", "[0:0:0:0:0:0:0:1]"), 1, "untrusted: ", servers["other"][1])
                check("openssl: pinned at 127.0.0.1", get("pinned", "127.0.0.1"), 0, "body of pinned.pem", servers["pinned"][1])
            else:  # libcurl sends no SNI for an address: no host to decide by
                check("curl: pinned at 127.0.0.1 has no host", get("pinned", "127.0.0.1"), 1, "refused: ", servers["pinned"][1])
    finally:
        for process, _, _ in servers.values():
            process.terminate()
            process.wait()


def main():
    build = os.path.abspath(sys.argv[1])
    os.environ["LD_LIBRARY_PATH"] = build  # the examples link libpinkeeper.so.0 from the build, as pkg-config gave it
    with tempfile.TemporaryDirectory(prefix="pk-c-tls-") as directory:
        fingerprints = make_certificates(directory)
        cache = os.path.join(directory, "cache")
        os.mkdir(cache, 0o755)
        write_cache(cache, fingerprints)
        probe_cases(build, directory, cache)
        example_cases(build, directory, cache)
    print("tls: %d failures" % failures)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
