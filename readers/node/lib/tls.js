'use strict';
// Pins checked on top of Node's own TLS verification (chain and host name), never instead of it.
//
// Node gives no API for the chain OpenSSL verified: getPeerCertificate(true) links the
// certificates the server *sent* by issuer name and key identifier (no signature check), then
// completes them from the trust store, and it was measured to differ from the verified path
// (README.md, "The verified chain"). So only the leaf is used: pins of depth 1 or more never
// match here (fail closed), and a name pinned only at depth >= 1 answers empty, which refuses.

const https = require('node:https');
const net = require('node:net');
const tls = require('node:tls');
const { commonName } = require('./certificate');
const { sha256 } = require('./cache-reader');
const { canonicalHost } = require('./host');
const { describePeer, escaped } = require('./names');
const { Verdict } = require('./validator');

/** False in every Node version tested (18, 20): no API gives the verified chain, so depth >= 1 pins never apply. */
const HAS_VERIFIED_CHAIN = false;

/**
 * The connection was refused by pinning: the verdict was `untrusted` or `empty` (both mean reject;
 * `empty` also means the store needs an update), or there was nothing verified to decide by
 * (`verdict` null). `host` and `commonName` are the names consulted.
 */
class PinningError extends Error {
  constructor(message, { verdict = null, host = null, commonName = null } = {}) {
    super(message);
    this.code = 'ERR_PINKEEPER_REFUSED';
    this.verdict = verdict;
    this.host = host;
    this.commonName = commonName;
  }

  get name() {
    return 'PinningError';
  }
}

function storeName(reader) {
  return reader.store === null ? `'${escaped(reader.path)}'` : `store '${escaped(reader.store)}'`;
}

/**
 * Checks the pins for a leaf that Node verified for `host`; a PinningError when refused, else
 * undefined. Only the leaf takes part (see the top of this file).
 */
function pinRefusal(reader, host, leafDER) {
  const store = storeName(reader);
  if (!leafDER || leafDER.length === 0) {
    return new PinningError(`pinkeeper: the server sent no certificate (${store})`, { verdict: Verdict.UNTRUSTED });
  }
  // H is the name Node's own check verified the certificate for (the servername, else the host),
  // in its one form: Node's check reads some spellings its own way (a second trailing dot
  // dropped, an IPv6 address with a zone id), and a spelling without one form decides nothing.
  const names = { host: canonicalHost(host == null ? '' : String(host)), commonName: null };
  try {
    names.commonName = commonName(leafDER);
  } catch {
    // A certificate OpenSSL accepted but this walk cannot read: H decides alone.
  }
  if (names.host === null) {
    const spelled = host ? `'${escaped(String(host))}', which has no one spelling` : 'none';
    return new PinningError(`pinkeeper: ${store} decides by the host name the connection verified, and this connection has ${spelled}: `
      + 'refused; connect by the host name or the address in its usual form', { verdict: Verdict.UNTRUSTED, commonName: names.commonName });
  }
  const verdict = reader.verdictForChainDigests(names, [sha256(leafDER)]);
  const peer = describePeer(names);
  const details = { verdict, host: names.host, commonName: names.commonName };
  if (verdict === Verdict.TRUSTED) return undefined;
  if (verdict === Verdict.EMPTY) {
    return new PinningError(`pinkeeper: ${store} has no valid pin for ${peer} (empty): rejected; the store needs an update`, details);
  }
  if (!reader.admits(names)) {
    return new PinningError(`pinkeeper: ${peer} is not among the expected_common_names of ${store} (untrusted)`, details);
  }
  return new PinningError(`pinkeeper: ${store} does not pin the certificate of ${peer} (untrusted)`, details);
}

/**
 * A `checkServerIdentity` for tls.connect and https options: Node's own host name check
 * (tls.checkServerIdentity) first, then the pins. Node calls it after the chain verified and
 * before anything the client wrote is sent, and refuses the connection when it returns an error.
 * Node skips it when a session is resumed: tlsOptions() and the other helpers turn resumption off.
 * @param {import('./cache-reader').CacheReader} reader
 */
function checkServerIdentity(reader) {
  const check = (host, certificate) => {
    try {
      return tls.checkServerIdentity(host, certificate) ?? pinRefusal(reader, host, certificate?.raw);
    } catch (error) {
      // Thrown here, it would escape from Node's handshake code; refused instead.
      return new PinningError(`pinkeeper: ${storeName(reader)} could not check the pins (${error.message}): refused`);
    }
  };
  readerOf.set(check, reader);
  return check;
}

const readerOf = new WeakMap(); // each pinned checkServerIdentity and the reader it asks

const refuse = (what) => new TypeError(`pinkeeper: ${what}; pins are checked on top of Node's verification, never instead`);

/**
 * `options` with chain verification forced on, the pinned checkServerIdentity and no TLS session
 * resumption (`maxCachedSessions: 0`): Node skips checkServerIdentity when a session is resumed
 * and then gives no peer certificate at all, so a resumed connection could not be checked.
 * Options that would weaken this are refused (TypeError): `rejectUnauthorized: false` (Node then
 * connects, and sends what was written, whatever the chain), a checkServerIdentity of the
 * caller's (it would replace the pins), a `session` to resume, a session cache, and a
 * `createConnection` of the caller's (http2.connect would use its socket as it is, unchecked).
 */
function pinnedTLS(reader, options) {
  if (options.rejectUnauthorized === false) throw refuse('rejectUnauthorized: false turns chain verification off');
  if (options.checkServerIdentity !== undefined && readerOf.get(options.checkServerIdentity) !== reader) {
    throw refuse('a pinned connection checks the server identity itself (tls.checkServerIdentity, then the pins)');
  }
  if (options.session !== undefined) throw refuse('a resumed TLS session skips the identity check and shows no certificate');
  if (options.maxCachedSessions) throw refuse('a session cache resumes sessions, which skip the identity check');
  if (options.createConnection !== undefined) {
    throw refuse('a createConnection of the caller\'s would make the TLS connection without these checks');
  }
  return {
    ...options,
    rejectUnauthorized: true,
    checkServerIdentity: options.checkServerIdentity ?? checkServerIdentity(reader),
    maxCachedSessions: 0,
  };
}

/**
 * The options of a pinned connection for tls.connect, http2.connect, https.request or an undici
 * `connect`: those of pinnedTLS() (see above), and `agent: false` for https.request, whose
 * default agent would resume TLS sessions, even ones an unpinned request set up. An `agent` of
 * the caller's is refused: use a PinnedAgent instead of these options.
 */
function tlsOptions(reader, options = {}) {
  if (options.agent !== undefined && options.agent !== false) {
    throw refuse('an https.Agent resumes TLS sessions: give a PinnedAgent instead of these options');
  }
  return { ...pinnedTLS(reader, options), agent: false };
}

/**
 * Refuses, when the handshake ends and before anything written is sent, what checkServerIdentity
 * did not decide: a connection that is not authorized, and a resumed session (Node skips the
 * identity check for it and gives no peer certificate to check the pins with).
 */
function guard(socket, reader) {
  socket.prependOnceListener('secureConnect', () => {
    let why = null;
    if (!socket.authorized) why = `the chain was not verified (${socket.authorizationError})`;
    else if (socket.isSessionReused()) why = 'the TLS session was resumed, so Node checked neither the certificate nor the host name';
    if (why !== null) socket.destroy(new PinningError(`pinkeeper: ${why}; ${storeName(reader)} refused the connection`));
  });
  return socket;
}

/**
 * tls.connect with the pins checked: as tls.connect(options, callback), its options checked and
 * completed as tlsOptions() does. A refused connection emits 'error' with a PinningError (or Node's own
 * verification error) and never calls `callback`. A 'secureConnect' listener of your own runs
 * after the check: skip a socket that is `destroyed` by then.
 * @returns {tls.TLSSocket}
 */
function connect(reader, options, callback) {
  const socket = guard(tls.connect(pinnedTLS(reader, options)), reader);
  if (callback) socket.once('secureConnect', () => socket.destroyed || callback.call(socket));
  return socket;
}

/**
 * An https.Agent whose connections are pinned. Its TLS options (those of pinnedTLS()) take
 * precedence over a request's, as an Agent's own options do; it keeps no TLS sessions (every new
 * connection is a full handshake: use keepAlive to reuse connections). Keep one per store for the
 * life of the process.
 */
class PinnedAgent extends https.Agent {
  /**
   * @param {import('./cache-reader').CacheReader} reader
   * @param {https.AgentOptions} [options] e.g. `ca` for a private authority, keepAlive
   */
  constructor(reader, options = {}) {
    super(pinnedTLS(reader, options));
    this.reader = reader;
  }

  createConnection(...args) {
    const options = args.find((arg) => arg !== null && typeof arg === 'object') ?? {};
    const callback = args.find((arg) => typeof arg === 'function');
    let pinned;
    try {
      pinned = pinnedTLS(this.reader, options);
    } catch (error) {
      if (!callback) throw error;
      process.nextTick(callback, error);
      return undefined;
    }
    return guard(super.createConnection(pinned), this.reader);
  }
}

/**
 * A connector for an undici Agent or Client (`new undici.Agent({ connect: connector(reader) })`)
 * from the `undici` package: it opens pinned TLS connections (connect()) and hands them over once
 * the pins were checked. `options` are more TLS options (`ca`, …).
 */
function connector(reader, options = {}) {
  pinnedTLS(reader, options); // refuses weakening options now
  return ({ hostname, host, protocol, port, servername }, callback) => {
    if (protocol !== 'https:') {
      process.nextTick(callback, new PinningError(`pinkeeper: ${storeName(reader)} pins TLS connections; ${protocol} is not one`));
      return undefined;
    }
    const name = String(hostname ?? host).replace(/^\[(.*)\]$/, '$1');
    const sni = servername || (net.isIP(name) ? undefined : name);
    const socket = connect(reader, { ...options, host: name, port: Number(port) || 443, servername: sni });
    let done = false;
    const finish = (error) => {
      if (done) return;
      done = true;
      socket.removeListener('error', finish);
      callback(error ?? null, error ? undefined : socket);
    };
    socket.once('error', finish);
    socket.once('secureConnect', () => socket.destroyed || finish(null));
    return socket;
  };
}

module.exports = { PinningError, HAS_VERIFIED_CHAIN, checkServerIdentity, tlsOptions, connect, PinnedAgent, connector };
