'use strict';
// The TLS helpers against servers on loopback, with certificates made at test time. Every refused
// connection is also checked from the server's side: it received no application data. Each
// attack a naive client would let through has a control: the same connection without the helper
// (or with the naive check the helper avoids) is accepted and the server receives the request,
// so these tests can fail.

const assert = require('node:assert/strict');
const crypto = require('node:crypto');
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const http2 = require('node:http2');
const https = require('node:https');
const path = require('node:path');
const tls = require('node:tls');
const { test, after } = require('node:test');
const { CacheReader, PinningError, PinnedAgent, connect, connector, tlsOptions } = require('..');
const { checkServerIdentity } = require('../lib/tls');
const { STORE, temporaryDirectory } = require('./support/cases');
const { pin, publishPins } = require('./support/caches');
const { makeTestPki } = require('./support/pki');
const { startServer, loopback, outcome, delay } = require('./support/servers');

const pkiDirectory = temporaryDirectory('pinkeeper-tls-pki-');
const certificates = makeTestPki(pkiDirectory);
const { root, intermediate, pinned, unpinned } = certificates;
const trust = { ca: [root.pem] };
const directories = [pkiDirectory];
after(() => directories.forEach((directory) => fs.rmSync(directory, { recursive: true, force: true })));

/** A reader of a fresh cache directory holding `pins` (none: no file). */
function readerWith(pins, options = {}) {
  const directory = temporaryDirectory('pinkeeper-tls-cache-');
  directories.push(directory);
  if (pins !== null) publishPins(directory, pins, options);
  return {
    directory,
    reader: CacheReader.forStore(STORE, { cacheDirectory: directory, expectedCommonNames: options.expectedCommonNames ?? null }),
  };
}

const pinsOfApi = () => [pin('api.example.com', pinned.fingerprint)];

/** A server for api.example.com presenting `leaf` (and the trusted intermediate unless `chain` says otherwise). */
function serve(leaf, chain = [leaf, intermediate], more = {}) {
  return startServer({ key: leaf.key, chain, ...more });
}

/** GET https://api.example.com:PORT/ through `options` (an agent, TLS options); resolves { status, body }. */
function get(port, options, host = 'api.example.com') {
  return new Promise((resolve, reject) => {
    const request = https.get({ host, port, path: '/', lookup: loopback, ...options }, (response) => {
      let body = '';
      response.on('data', (data) => {
        body += data;
      });
      response.on('end', () => resolve({ status: response.statusCode, body }));
    });
    request.on('error', reject);
  });
}

/** Sends one request with `options` and expects a refusal; returns the error. */
async function refused(port, options, host) {
  const error = await get(port, options, host).then(() => null, (failure) => failure);
  assert.ok(error, 'the request went through');
  return error;
}

const sha256 = (der) => crypto.createHash('sha256').update(der).digest();

test('a pinned leaf passes with every helper, and the request arrives', async () => {
  const { reader } = readerWith(pinsOfApi());
  const server = await serve(pinned);
  try {
    assert.deepEqual(await get(server.port, { agent: new PinnedAgent(reader, trust) }), { status: 200, body: 'pinned' });
    assert.deepEqual(await get(server.port, tlsOptions(reader, trust)), { status: 200, body: 'pinned' });

    const socket = connect(reader, { host: 'api.example.com', port: server.port, lookup: loopback, ...trust },
      () => socket.end('GET / HTTP/1.1\r\n\r\n'));
    assert.equal(await outcome(socket), null);
    assert.equal(server.received.filter((data) => data.startsWith('GET / ')).length, 3);
  } finally {
    await server.close();
  }
});

test('an unpinned leaf of the trusted authority is refused before the request is sent (control: a plain client sends it)', async () => {
  const { reader } = readerWith(pinsOfApi());
  const server = await serve(unpinned);
  try {
    const error = await refused(server.port, { agent: new PinnedAgent(reader, trust) });
    assert.ok(error instanceof PinningError, error.message);
    assert.equal(error.verdict, 'untrusted');
    assert.equal(error.message, "pinkeeper: store 'banking' does not pin the certificate of 'api.example.com' (untrusted)");
    await refused(server.port, tlsOptions(reader, trust));
    assert.equal(server.gotData, false);

    assert.equal((await get(server.port, { ...trust, agent: false })).status, 200);
    assert.equal(server.gotData, true);
  } finally {
    await server.close();
  }
});

test('data written before the handshake ends is not sent to an unpinned server', async () => {
  const { reader } = readerWith(pinsOfApi());
  for (const maxVersion of ['TLSv1.2', 'TLSv1.3']) {
    const server = await serve(unpinned, undefined, { maxVersion });
    const accepted = await serve(pinned, undefined, { maxVersion });
    try {
      const socket = connect(reader, { host: 'api.example.com', port: server.port, lookup: loopback, ...trust });
      socket.write('written at once');
      const error = await outcome(socket);
      assert.ok(error instanceof PinningError, `${maxVersion}: ${error}`);
      assert.equal(server.gotData, false, maxVersion);

      const good = connect(reader, { host: 'api.example.com', port: accepted.port, lookup: loopback, ...trust });
      good.end('written at once');
      assert.equal(await outcome(good), null);
      await delay(50);
      assert.deepEqual(accepted.received, ['written at once'], maxVersion);
    } finally {
      await server.close();
      await accepted.close();
    }
  }
});

test('a pinned certificate served for another host is refused by the host name check the helper keeps', async () => {
  // The store pins other.example.com's leaf under api.example.com too: only Node's host name
  // check tells it apart. Control: a check of the pins alone (no host name check) accepts it.
  const otherHost = certificates.otherHost;
  const { reader } = readerWith([pin('api.example.com', otherHost.fingerprint)]);
  const server = await serve(otherHost);
  try {
    const error = await refused(server.port, { agent: new PinnedAgent(reader, trust) });
    assert.equal(error.code, 'ERR_TLS_CERT_ALTNAME_INVALID');
    assert.equal(server.gotData, false);

    const pinsOnly = (host, certificate) => (reader.verdict(host, sha256(certificate.raw)) === 'trusted'
      ? undefined : new Error('unpinned'));
    assert.equal((await get(server.port, { ...trust, checkServerIdentity: pinsOnly, agent: false })).status, 200);
    assert.equal(server.gotData, true);
  } finally {
    await server.close();
  }
});

test('a pinned leaf of an authority nobody trusts is refused, whatever a request asks '
  + '(control: rejectUnauthorized false sends it)', async () => {
  const rogue = certificates.rogue;
  const { reader } = readerWith([pin('api.example.com', rogue.fingerprint)]);
  const server = await serve(rogue, [rogue]);
  try {
    const agent = new PinnedAgent(reader, trust);
    const error = await refused(server.port, { agent, rejectUnauthorized: false, checkServerIdentity: () => undefined });
    assert.equal(error.code, 'UNABLE_TO_VERIFY_LEAF_SIGNATURE');
    assert.throws(() => tlsOptions(reader, { ...trust, rejectUnauthorized: false }), /rejectUnauthorized: false/);
    assert.throws(() => new PinnedAgent(reader, { rejectUnauthorized: false }), /rejectUnauthorized: false/);
    assert.throws(() => connect(reader, { host: 'api.example.com', port: server.port, rejectUnauthorized: false }),
      /rejectUnauthorized: false/);
    agent.options.rejectUnauthorized = false; // changed behind the agent's back: refused when it connects
    await assert.rejects(get(server.port, { agent }), /rejectUnauthorized: false/);
    assert.equal(server.gotData, false);

    assert.equal((await get(server.port, { rejectUnauthorized: false, agent: false })).status, 200);
    assert.equal(server.gotData, true);
  } finally {
    await server.close();
  }
});

test('NODE_TLS_REJECT_UNAUTHORIZED=0 does not turn verification off for pinned connections', () => {
  const { directory } = readerWith([pin('api.example.com', certificates.rogue.fingerprint)]);
  const script = `
    const { CacheReader, connect } = require(${JSON.stringify(path.join(__dirname, '..'))});
    const { startServer, loopback, outcome } = require(${JSON.stringify(path.join(__dirname, 'support', 'servers'))});
    const rogue = ${JSON.stringify({ key: certificates.rogue.key.toString(), pem: certificates.rogue.pem })};
    (async () => {
      const server = await startServer({ key: rogue.key, chain: [rogue] });
      const reader = CacheReader.forStore('banking', { cacheDirectory: ${JSON.stringify(directory)} });
      const socket = connect(reader, { host: 'api.example.com', port: server.port, lookup: loopback, ca: [${JSON.stringify(root.pem)}] });
      socket.write('GET / HTTP/1.1\\r\\n\\r\\n');
      const error = await outcome(socket);
      await server.close();
      console.log(JSON.stringify({ error: error && error.code, gotData: server.gotData }));
    })();`;
  const env = { ...process.env, NODE_TLS_REJECT_UNAUTHORIZED: '0' };
  const output = execFileSync(process.execPath, ['-e', script], { env, stdio: ['ignore', 'pipe', 'ignore'] });
  assert.deepEqual(JSON.parse(output), { error: 'UNABLE_TO_VERIFY_LEAF_SIGNATURE', gotData: false });
});

test('a leaf whose CN the store exempts, for a host it pins, is refused: the host decides '
  + '(control: deciding by the CN sends it)', async () => {
  // docs/protocol.md, "the host decides": a wrongly issued certificate for api.example.com calling itself
  // unlisted.example, while domainsConfig leaves unlisted names unpinned.
  const leaf = certificates.unlistedCommonName;
  const domainsConfig = { sslPinningRequiredForUnlisted: false, domains: [{ name: 'api.example.com', sslPinningRequired: true }] };
  const { reader } = readerWith(pinsOfApi(), { domainsConfig });
  const server = await serve(leaf);
  try {
    const error = await refused(server.port, { agent: new PinnedAgent(reader, trust) });
    assert.equal(error.message,
      "pinkeeper: store 'banking' does not pin the certificate of 'api.example.com' "
      + "(certificate common name 'unlisted.example') (untrusted)");
    assert.deepEqual([error.host, error.commonName, error.verdict], ['api.example.com', 'unlisted.example', 'untrusted']);
    assert.equal(server.gotData, false);

    const byCommonName = (host, certificate) => tls.checkServerIdentity(host, certificate)
      ?? (reader.verdict(certificate.subject.CN, sha256(certificate.raw)) === 'trusted' ? undefined : new Error('unpinned'));
    assert.equal((await get(server.port, { ...trust, checkServerIdentity: byCommonName, agent: false })).status, 200);
    assert.equal(server.gotData, true);
  } finally {
    await server.close();
  }
});

test('pins under the host match a leaf whose CN differs, and pins under the CN match too', async () => {
  const leaf = certificates.unlistedCommonName;
  const server = await serve(leaf);
  try {
    for (const name of ['api.example.com', 'unlisted.example']) {
      const { reader } = readerWith([pin(name, leaf.fingerprint)]);
      assert.equal((await get(server.port, { agent: new PinnedAgent(reader, trust) })).status, 200, name);
    }
    const { reader } = readerWith([pin('api.example.com', leaf.fingerprint)], { expectedCommonNames: ['www.example.com'] });
    const error = await refused(server.port, { agent: new PinnedAgent(reader, trust) });
    assert.equal(error.message,
      "pinkeeper: 'api.example.com' (certificate common name 'unlisted.example') "
      + "is not among the expected_common_names of store 'banking' (untrusted)");
  } finally {
    await server.close();
  }
});

test('a pinned intermediate appended by the server outside the verified path never matches', async () => {
  // The store pins, at depth 1, an intermediate of another authority that the server appends.
  // No control: Node links only issuers (getPeerCertificate(true)) and lists nothing else the
  // server sent; the namesake test below is where a naive check does accept.
  const { reader } = readerWith([pin('api.example.com', certificates.otherIntermediate.fingerprint, { depth: 1 })]);
  const server = await serve(unpinned, [unpinned, intermediate, certificates.otherIntermediate]);
  try {
    const error = await refused(server.port, { agent: new PinnedAgent(reader, trust) });
    assert.equal(error.verdict, 'empty');
    assert.equal(server.gotData, false);
  } finally {
    await server.close();
  }
});

/** The chain getPeerCertificate(true) links, leaf first, as SHA-256 digests (what a naive helper would compare). */
function linkedChain(certificate) {
  const digests = [];
  for (let current = certificate; current?.raw && !digests.some((digest) => digest.equals(sha256(current.raw)));
    current = current.issuerCertificate) {
    digests.push(sha256(current.raw));
  }
  return digests;
}

test('a sent namesake of the real issuer is refused, where getPeerCertificate(true) puts it at depth 1 '
  + '(control: comparing that chain sends the request)', async () => {
  // The server sends the leaf (no key identifiers), then an expired intermediate of another
  // authority named like the real issuer, then the real one. OpenSSL verifies through the real
  // one (it prefers a currently valid issuer); getPeerCertificate(true) links the first
  // certificate that names the leaf's issuer, the expired namesake.
  const leaf = certificates.withoutKeyIdentifiers;
  const namesake = certificates.expiredNamesake;
  const { reader } = readerWith([pin('api.example.com', namesake.fingerprint, { depth: 1 })]);
  const server = await serve(leaf, [leaf, namesake, intermediate]);
  try {
    const error = await refused(server.port, { agent: new PinnedAgent(reader, trust) });
    assert.equal(error.verdict, 'empty');
    assert.equal(server.gotData, false);

    const linked = [];
    const naive = (host, certificate) => {
      linked.push(...linkedChain(certificate));
      const matched = reader.verdictForChainDigests(host, linkedChain(certificate)) === 'trusted';
      return tls.checkServerIdentity(host, certificate) ?? (matched ? undefined : new Error('unpinned'));
    };
    assert.equal((await get(server.port, { ...trust, checkServerIdentity: naive, agent: false })).status, 200);
    assert.equal(server.gotData, true);
    assert.ok(linked[1].equals(Buffer.from(namesake.fingerprint, 'base64')), 'getPeerCertificate(true) linked the namesake at depth 1');
    // getPeerX509Certificate() links its issuer the same way.
    const socket = tls.connect({ host: 'api.example.com', port: server.port, lookup: loopback, ...trust });
    const issuer = await new Promise((resolve) => socket.on('secureConnect',
      () => resolve(socket.getPeerX509Certificate().issuerCertificate)));
    socket.destroy();
    assert.ok(issuer.raw.equals(namesake.der));
  } finally {
    await server.close();
  }
});

test('getPeerCertificate(true) links a cross-signed root the server sent where the verified path ends at the trusted root', async () => {
  // The client trusts only the self-signed root. The server also sends that root cross-signed by
  // the other authority, which nobody trusts: a verified path cannot hold it (its issuer is no
  // trust anchor), yet the linked chain has it at depth 2 (and a depth-2 pin of the trusted root
  // would not be found there).
  const cross = certificates.rootCrossSigned;
  const { reader } = readerWith([pin('api.example.com', cross.fingerprint, { depth: 2 })]);
  const server = await serve(pinned, [pinned, intermediate, cross]);
  try {
    const linked = [];
    const record = (host, certificate) => {
      linked.push(...linkedChain(certificate));
      return tls.checkServerIdentity(host, certificate);
    };
    assert.equal((await get(server.port, { ...trust, checkServerIdentity: record, agent: false })).status, 200);
    assert.deepEqual(linked.map((digest) => digest.toString('base64')), [pinned.fingerprint, intermediate.fingerprint, cross.fingerprint]);
    assert.equal((await refused(server.port, { agent: new PinnedAgent(reader, trust) })).verdict, 'empty');
  } finally {
    await server.close();
  }
});

test('pins of depth 1 or more never apply: a name pinned only on its intermediate is empty and refused (fail closed)', async () => {
  const { reader } = readerWith([pin('api.example.com', intermediate.fingerprint, { depth: 1 })]);
  const server = await serve(pinned);
  try {
    const error = await refused(server.port, { agent: new PinnedAgent(reader, trust) });
    assert.equal(error.message,
      "pinkeeper: store 'banking' has no valid pin for 'api.example.com' (empty): rejected; the store needs an update");
    assert.equal(server.gotData, false);
  } finally {
    await server.close();
  }
});

test('a store without a file refuses as empty', async () => {
  const { reader } = readerWith(null);
  const server = await serve(pinned);
  try {
    assert.equal((await refused(server.port, { agent: new PinnedAgent(reader, trust) })).verdict, 'empty');
    assert.equal(server.gotData, false);
  } finally {
    await server.close();
  }
});

/** Wraps agent.createConnection to record, for each connection, whether its TLS session was resumed. */
function recordResumption(agent, resumed) {
  const create = agent.createConnection.bind(agent);
  agent.createConnection = (...args) => {
    const socket = create(...args);
    socket?.prependListener('secureConnect', () => resumed.push(socket.isSessionReused()));
    return socket;
  };
  return agent;
}

test('no TLS session is resumed, since Node checks nothing then: a pin removed takes effect at the next connection '
  + '(control: a session cache lets it through)', async () => {
  for (const maxVersion of ['TLSv1.2', 'TLSv1.3']) {
    const server = await serve(pinned, undefined, { maxVersion });
    try {
      for (const helper of ['PinnedAgent', 'control', 'PinnedAgent given a session cache']) {
        const { directory, reader } = readerWith(pinsOfApi());
        const resumed = [];
        const agent = helper === 'control'
          ? new https.Agent({ ...trust, checkServerIdentity: checkServerIdentity(reader) }) : new PinnedAgent(reader, trust);
        if (helper !== 'PinnedAgent') agent.maxCachedSessions = 100; // https.Agent's default
        recordResumption(agent, resumed);
        assert.equal((await get(server.port, { agent })).status, 200);
        await delay(50); // a TLS 1.3 session ticket arrives after the handshake
        publishPins(directory, [pin('api.example.com', unpinned.fingerprint)]); // the leaf is no longer pinned
        const before = server.received.length;
        const result = await get(server.port, { agent }).then(() => 'sent', (error) => error);
        const label = `${maxVersion} ${helper}`;
        if (helper === 'PinnedAgent') {
          assert.deepEqual(resumed, [false], label); // refused by checkServerIdentity before secureConnect
          assert.equal(result.verdict, 'untrusted', label);
        } else if (helper === 'control') {
          assert.deepEqual(resumed, [false, true], label);
          assert.equal(result, 'sent', label);
        } else {
          assert.deepEqual(resumed, [false, true], label);
          assert.match(result.message, /the TLS session was resumed/, label);
        }
        const sent = server.received.slice(before).join('');
        if (helper === 'control') assert.match(sent, /^GET \//, label);
        else assert.equal(sent, '', label);
      }
    } finally {
      await server.close();
    }
  }
  const { reader } = readerWith(pinsOfApi());
  assert.throws(() => connect(reader, { host: 'api.example.com', port: 443, session: Buffer.alloc(8) }), /resumed TLS session/);
  assert.throws(() => new PinnedAgent(reader, { maxCachedSessions: 10 }), /session cache/);
});

test('H is the name Node verified in its one form: the servername rather than the address, one trailing dot dropped', async () => {
  // A leaf whose CN (unlisted.example) is neither name asked for, so that only H can match.
  const leaf = certificates.unlistedCommonName;
  const server = await serve(leaf);
  try {
    const { reader } = readerWith([pin('api.example.com', leaf.fingerprint)]);
    const byName = { host: '127.0.0.1', servername: 'API.example.com.', port: server.port, ...trust };
    const socket = connect(reader, byName, () => socket.end('by servername'));
    assert.equal(await outcome(socket), null);
    const byAddress = connect(reader, { host: '127.0.0.1', port: server.port, ...trust });
    const error = await outcome(byAddress);
    assert.deepEqual([error?.host, error?.commonName, error?.verdict], ['127.0.0.1', 'unlisted.example', 'empty']);
    // Node's own check drops a second trailing dot too; a name without one form is refused here.
    const twoDots = await outcome(connect(reader, { host: '127.0.0.1', servername: 'api.example.com..', port: server.port, ...trust }));
    assert.ok(twoDots instanceof PinningError && /'api.example.com..', which has no one spelling/.test(twoDots.message), String(twoDots));

    const { reader: addressPinned } = readerWith([pin('127.0.0.1', leaf.fingerprint)]);
    const direct = connect(addressPinned, { host: '127.0.0.1', port: server.port, ...trust }, () => direct.end('by address'));
    assert.equal(await outcome(direct), null);
    await delay(50);
    assert.deepEqual(server.received.filter(Boolean).sort(), ['by address', 'by servername']);
  } finally {
    await server.close();
  }
});

/** Connects to `port` as `host` with `reader`'s pins and writes `host`: resolves with the error, or null. */
function tryConnect(reader, host, port) {
  const socket = connect(reader, { host, port, lookup: loopback, ...trust }, () => socket.end(host));
  return outcome(socket);
}

test('an address however it is spelled is pinned as its one form; IPv4 spellings without one are refused', async () => {
  // Each leaf is valid for ::1 and 127.0.0.1, and for the DNS names 127.000.000.001 and 127.1,
  // which Node's host name check matches as names. domainsConfig requires pins for both addresses
  // and exempts every other name: a spelling that escaped the one form would switch pinning off.
  const san = 'subjectAltName=IP:::1,IP:127.0.0.1,DNS:127.000.000.001,DNS:127.1';
  const issue = (name) => certificates.pki.issue(name, '/CN=loopback.example', intermediate, [san, 'extendedKeyUsage=serverAuth']);
  const [good, bad] = [issue('loopback-pinned'), issue('loopback-unpinned')];
  const required = ['::1', '127.0.0.1'].map((name) => ({ name, sslPinningRequired: true }));
  const domainsConfig = { sslPinningRequiredForUnlisted: false, domains: required };
  const { reader } = readerWith(['::1', '127.0.0.1', '127.000.000.001'].map((name) => pin(name, good.fingerprint)), { domainsConfig });
  const servers = {};
  const made = [['good6', good, '::1'], ['bad6', bad, '::1'], ['good4', good, '127.0.0.1'], ['bad4', bad, '127.0.0.1']];
  for (const [name, leaf, host] of made) {
    servers[name] = await startServer({ key: leaf.key, chain: [leaf, intermediate], host });
  }
  // Debian's Node 18 prints an IPv6 SAN in full (0:0:0:0:0:0:0:1) and its own check then matches
  // no IPv6 address at all: it refuses every spelling itself, before the pins are asked.
  const nodeMatchesIPv6 = tls.checkServerIdentity('::1', new crypto.X509Certificate(good.pem).toLegacyObject()) === undefined;
  const refusedByNode = (error) => error?.code === 'ERR_TLS_CERT_ALTNAME_INVALID';
  try {
    for (const spelling of ['::1', '0:0:0:0:0:0:0:1', '::0:1']) {
      const accepted = await tryConnect(reader, spelling, servers.good6.port);
      assert.ok(nodeMatchesIPv6 ? accepted === null : refusedByNode(accepted), `${spelling}: ${accepted}`);
      const refusal = await tryConnect(reader, spelling, servers.bad6.port);
      if (!nodeMatchesIPv6) assert.ok(refusedByNode(refusal), `${spelling}: ${refusal}`);
      else assert.deepEqual([refusal?.constructor, refusal?.host, refusal?.verdict], [PinningError, '::1', 'untrusted'], spelling);
    }
    assert.equal(await tryConnect(reader, '127.0.0.1', servers.good4.port), null);
    assert.equal((await tryConnect(reader, '127.0.0.1', servers.bad4.port))?.verdict, 'untrusted');
    for (const spelling of ['127.000.000.001', '127.1']) {
      for (const server of [servers.good4, servers.bad4]) {
        const refusal = await tryConnect(reader, spelling, server.port);
        assert.ok(refusal instanceof PinningError && refusal.message.includes(`'${spelling}', which has no one spelling`), String(refusal));
      }
    }
    await delay(50);
    assert.deepEqual(servers.good6.received.filter(Boolean).sort(), nodeMatchesIPv6 ? ['0:0:0:0:0:0:0:1', '::0:1', '::1'] : []);
    assert.deepEqual(servers.good4.received.filter(Boolean), ['127.0.0.1']);
    assert.equal(servers.bad6.gotData || servers.bad4.gotData, false);

    // Control: Node's own verification accepts the unpinned leaf for each of these spellings.
    const controls = [['127.1', servers.bad4], ...(nodeMatchesIPv6 ? [['0:0:0:0:0:0:0:1', servers.bad6]] : [])];
    for (const [host, server] of controls) {
      const plain = tls.connect({ host, port: server.port, lookup: loopback, ...trust }, () => plain.end('plain'));
      assert.equal(await outcome(plain), null, host);
      await delay(50);
      assert.equal(server.gotData, true, host);
    }
  } finally {
    await Promise.all(Object.values(servers).map((server) => server.close()));
  }
});

test('https.request with tlsOptions() resumes no session, and takes no agent of the caller\'s', async () => {
  const { reader } = readerWith(pinsOfApi());
  const server = await serve(pinned);
  try {
    const resumed = [];
    for (let request = 0; request < 2; request++) {
      const options = { ...tlsOptions(reader, trust), host: 'api.example.com', port: server.port, lookup: loopback };
      await new Promise((resolve, reject) => {
        https.get(options, (response) => response.resume().on('end', resolve))
          .on('socket', (socket) => socket.prependListener('secureConnect', () => resumed.push(socket.isSessionReused())))
          .on('error', reject);
      });
      await delay(50);
    }
    assert.deepEqual(resumed, [false, false]);
    assert.throws(() => tlsOptions(reader, { agent: new https.Agent() }), /give a PinnedAgent instead/);
  } finally {
    await server.close();
  }
});

test('a failure while checking the pins refuses the connection rather than escaping into Node', () => {
  const failing = {
    store: 'banking', path: 'banking.json', verdictForChainDigests() { throw new Error('the disk is on fire'); }, admits: () => true,
  };
  const certificate = new crypto.X509Certificate(pinned.pem).toLegacyObject();
  const refusal = checkServerIdentity(failing)('api.example.com', certificate);
  assert.ok(refusal instanceof PinningError);
  assert.equal(refusal.message, "pinkeeper: store 'banking' could not check the pins (the disk is on fire): refused");
  assert.equal(checkServerIdentity(failing)('other.example.com', certificate).code, 'ERR_TLS_CERT_ALTNAME_INVALID'); // Node's check first
});

test('options that would replace the pinned identity check are refused', () => {
  const { reader } = readerWith(pinsOfApi());
  const other = readerWith(pinsOfApi()).reader;
  assert.throws(() => tlsOptions(reader, { checkServerIdentity: () => undefined }), /checks the server identity itself/);
  assert.throws(() => tlsOptions(reader, { checkServerIdentity: checkServerIdentity(other) }), /checks the server identity itself/);
  assert.equal(typeof tlsOptions(reader, { checkServerIdentity: checkServerIdentity(reader) }).checkServerIdentity, 'function');
  assert.throws(() => new PinnedAgent(reader, { checkServerIdentity: tls.checkServerIdentity }), /checks the server identity itself/);
  // http2.connect uses a createConnection as it is: its socket would carry no pinned check.
  assert.throws(() => tlsOptions(reader, { createConnection: () => tls.connect({ port: 1 }) }), /createConnection of the caller's/);
});

/** One GET over HTTP/2 with `options`; resolves the body or rejects with the session's error. */
function http2Get(port, options) {
  return new Promise((resolve, reject) => {
    const session = http2.connect(`https://api.example.com:${port}`, { lookup: loopback, ...options });
    session.on('error', reject);
    const request = session.request({ ':path': '/' });
    request.on('error', reject);
    let body = '';
    request.on('data', (data) => {
      body += data;
    });
    request.on('end', () => {
      session.close();
      resolve(body);
    });
  });
}

test('http2.connect takes tlsOptions() too', async () => {
  const { reader } = readerWith(pinsOfApi());
  const servers = [];
  const received = [];
  for (const leaf of [pinned, unpinned]) {
    const server = http2.createSecureServer({ key: leaf.key, cert: leaf.pem + intermediate.pem });
    server.on('stream', (stream, headers) => {
      received.push(`${leaf.name} ${headers[':path']}`);
      stream.respond({ ':status': 200 });
      stream.end('pinned');
    });
    await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
    servers.push(server);
  }
  try {
    assert.equal(await http2Get(servers[0].address().port, tlsOptions(reader, trust)), 'pinned');
    const error = await http2Get(servers[1].address().port, tlsOptions(reader, trust)).then(() => null, (failure) => failure);
    assert.ok((error?.cause ?? error) instanceof PinningError, String(error)); // the pending stream is cancelled because of it
    assert.equal(await http2Get(servers[1].address().port, trust), 'pinned'); // control: without the pins
    assert.deepEqual(received, ['pinned /', 'unpinned /']);
  } finally {
    servers.forEach((server) => server.close());
  }
});

/** The undici Agent class Node's fetch uses, reached through its global dispatcher (tests only). */
async function bundledUndiciAgent() {
  const server = https.createServer({ key: pinned.key, cert: pinned.pem + intermediate.pem });
  server.on('request', (request, response) => response.end());
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  await fetch(`https://127.0.0.1:${server.address().port}/`).catch(() => {}); // creates the global dispatcher
  server.close();
  return globalThis[Symbol.for('undici.globalDispatcher.1')]?.constructor;
}

test('connector() pins the connections of an undici Agent (the undici bundled with Node, for fetch)', async (t) => {
  const Agent = await bundledUndiciAgent();
  if (typeof Agent !== 'function') {
    t.skip('this Node keeps its undici out of reach (no global dispatcher symbol)');
    return;
  }
  const { reader } = readerWith(pinsOfApi());
  const good = await serve(pinned);
  const bad = await serve(unpinned);
  try {
    const dispatcher = new Agent({ connect: connector(reader, { ...trust, lookup: loopback }) });
    const response = await fetch(`https://api.example.com:${good.port}/`, { dispatcher });
    assert.equal(await response.text(), 'pinned');
    const error = await fetch(`https://api.example.com:${bad.port}/`, { dispatcher }).then(() => null, (failure) => failure);
    assert.ok(error?.cause instanceof PinningError, String(error?.cause ?? error));
    assert.equal(bad.gotData, false);
    assert.throws(() => connector(reader, { rejectUnauthorized: false }), /rejectUnauthorized: false/);
    await dispatcher.close();
  } finally {
    await good.close();
    await bad.close();
  }
});
