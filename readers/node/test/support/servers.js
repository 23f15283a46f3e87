'use strict';
// A TLS server on loopback that records every byte of application data it receives and answers
// each request with a small HTTP response, and name resolution that sends every host to it.

const tls = require('node:tls');

const RESPONSE = 'HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 6\r\nConnection: close\r\n\r\npinned';

/**
 * Starts a server on `host` (127.0.0.1 unless given) presenting `chain` (certificates, leaf first,
 * as the server sends them) with `key`. `received` holds the application data of each connection (empty string: none).
 */
async function startServer({ key, chain, maxVersion, host = '127.0.0.1' }) {
  const received = [];
  const sockets = new Set();
  const server = tls.createServer({ key, cert: chain.map((certificate) => certificate.pem).join(''), maxVersion }, (socket) => {
    const index = received.push('') - 1;
    socket.on('data', (data) => {
      received[index] += data.toString('latin1');
      if (received[index].includes('\r\n\r\n')) socket.end(RESPONSE);
    });
    socket.on('error', () => {});
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  server.on('tlsClientError', () => {});
  await new Promise((resolve) => server.listen(0, host, resolve));
  return {
    port: server.address().port,
    received,
    /** Whether any connection received application data. */
    get gotData() {
      return received.some((data) => data.length > 0);
    },
    close() {
      for (const socket of sockets) socket.destroy();
      return new Promise((resolve) => server.close(resolve));
    },
  };
}

/** A `lookup` for net/tls/https options: every name is 127.0.0.1, so clients verify and send SNI for the name itself. */
function loopback(hostname, options, callback) {
  if (options.all) callback(null, [{ address: '127.0.0.1', family: 4 }]);
  else callback(null, '127.0.0.1', 4);
}

/**
 * Waits until the socket closes (reading what it receives); resolves with the error it failed
 * with, or null. A socket still open after `ms` (a connection that should have been refused and
 * was not) is destroyed and resolves with an error saying so, so that a test fails, not hangs.
 */
function outcome(socket, ms = 5000) {
  socket.resume();
  return new Promise((resolve) => {
    let failure = null;
    const timer = setTimeout(() => socket.destroy(new Error(`still open after ${ms} ms`)), ms);
    socket.on('error', (error) => {
      failure = error;
    });
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(failure);
    });
  });
}

const delay = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

module.exports = { startServer, loopback, outcome, delay };
