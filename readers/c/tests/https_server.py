#!/usr/bin/env python3
"""A loopback HTTPS server for tls.py: serves "body of CERT_NAME" on 127.0.0.1 and ::1 at PORT with
CERT.pem and CERT.key, and appends each request's path to LOG (so a test can tell that a refused
client sent nothing).

usage: https_server.py CERT KEY PORT LOG"""

import http.server
import socket
import ssl
import sys
import threading

CERT, KEY, PORT, LOG = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]


class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        with open(LOG, "a") as log:
            log.write(self.path + "\n")
        payload = ("body of %s\n" % CERT.rsplit("/", 1)[-1]).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *arguments):
        pass


class Server(http.server.ThreadingHTTPServer):
    def __init__(self, family, address):
        self.address_family = family
        super().__init__((address, PORT), Handler)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(CERT, KEY)
        self.socket = context.wrap_socket(self.socket, server_side=True)

    def handle_error(self, request, client_address):
        pass  # a client that refuses the handshake is what the tests expect


servers = [Server(socket.AF_INET, "127.0.0.1"), Server(socket.AF_INET6, "::1")]
for server in servers[1:]:
    threading.Thread(target=server.serve_forever, daemon=True).start()
print("ready", flush=True)
servers[0].serve_forever()
