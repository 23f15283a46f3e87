'use strict';
// CacheReader: the rules through its API, following the file as the daemon replaces it, and
// refusing what is not a regular file.

const assert = require('node:assert/strict');
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { test, after } = require('node:test');
const { CacheReader, CacheReaderError, readFallback, foldName, sameName, canonicalHost } = require('..');
const { STORE, publish, temporaryDirectory } = require('./support/cases');
const { pin, cacheDocument, publishPins } = require('./support/caches');

const directories = [];
after(() => directories.forEach((directory) => fs.rmSync(directory, { recursive: true, force: true })));

function directory() {
  const made = temporaryDirectory('pinkeeper-reader-');
  directories.push(made);
  return made;
}

const digest = (byte) => Buffer.alloc(32, byte);
const b64 = (byte) => digest(byte).toString('base64');
const NOW = 1763770000;
const open = (where, options = {}) => CacheReader.forStore(STORE, { cacheDirectory: where, ...options });

test('a pin is valid through its expiry second and never after', () => {
  const where = directory();
  publishPins(where, [pin('api.example.com', b64(1), { expires: NOW })]);
  const reader = open(where);
  assert.equal(reader.verdict('api.example.com', digest(1), 0, NOW), 'trusted');
  assert.equal(reader.verdict('api.example.com', digest(1), 0, NOW + 1), 'empty');
  assert.equal(reader.verdict('api.example.com', digest(1), 0, BigInt(NOW)), 'trusted');
});

test('names fold ASCII letters and nothing else', () => {
  assert.equal(foldName('API.Example.COM'), 'api.example.com');
  for (const [a, b] of [['\u212Aelvin.example', 'kelvin.example'], ['\u0131.example', 'i.example'], ['É.example', 'é.example'],
    ['é.example', 'e\u0301.example'], ['api.example.com.', 'api.example.com'], ['\u017F.example', 's.example']]) {
    assert.equal(sameName(a, b), false, `${a} / ${b}`);
  }
  const where = directory();
  // H is asked in its one form (the Kelvin sign's label as an A-label); N is compared as it is.
  const kelvin = canonicalHost('\u212Aelvin.example');
  assert.equal(kelvin, 'xn--elvin-r74b.example');
  publishPins(where, [pin('API.Example.com', b64(1)), pin(kelvin, b64(2)), pin('\u212Aelvin.example', b64(3))]);
  const reader = open(where);
  assert.equal(reader.verdict('api.EXAMPLE.com', digest(1), 0, NOW), 'trusted');
  assert.equal(reader.verdict('kelvin.example', digest(2), 0, NOW), 'empty');
  assert.equal(reader.verdict('\u212Aelvin.example', digest(2), 0, NOW), 'trusted');
  assert.equal(reader.verdict({ host: 'api.example.com', commonName: '\u212Aelvin.example' }, digest(3), 0, NOW), 'trusted');
  assert.equal(reader.verdict({ host: 'api.example.com', commonName: 'kelvin.example' }, digest(3), 0, NOW), 'untrusted');
});

test('every question asks H in its one form; a spelling without one is untrusted, whatever is pinned', () => {
  const where = directory();
  publishPins(where, [pin('::1', b64(1)), pin('127.0.0.1', b64(1)), pin('127.000.000.001', b64(1)), pin('fe80::1%eth0', b64(1))],
    { domainsConfig: { sslPinningRequiredForUnlisted: false, domains: [{ name: '::1', sslPinningRequired: true }] } });
  const reader = open(where);
  for (const spelling of ['::1', '0:0:0:0:0:0:0:1', '::0:1', '[::1]', '0000::1']) {
    assert.equal(reader.verdict(spelling, digest(1), 0, NOW), 'trusted', spelling);
    assert.equal(reader.verdict(spelling, digest(2), 0, NOW), 'untrusted', spelling); // listed as required: pins decide
    const withCommonName = { host: spelling, commonName: 'unlisted.example' };
    assert.equal(reader.verdictForChainDigests(withCommonName, [digest(2)], NOW), 'untrusted', spelling);
  }
  for (const spelling of ['127.000.000.001', '127.1', 'fe80::1%eth0', '[::1]:443', 'api.example.com..']) {
    assert.equal(reader.verdict(spelling, digest(1), 0, NOW), 'untrusted', spelling);
    assert.equal(reader.admits(spelling), false, spelling);
  }
  assert.equal(reader.verdict('127.0.0.1', digest(1), 0, NOW), 'trusted');
  assert.equal(reader.verdict('unlisted.example', digest(2), 0, NOW), 'trusted'); // not required: the control
});

test('the host decides: the common name adds pins to compare, never lifts the host\'s requirement', () => {
  const where = directory();
  publishPins(where, [pin('api.example.com', b64(1)), pin('*.example.com', b64(2))], {
    domainsConfig: { sslPinningRequiredForUnlisted: false, domains: [{ name: 'api.example.com', sslPinningRequired: true }] },
  });
  const reader = open(where);
  assert.equal(reader.verdict({ host: 'api.example.com', commonName: 'unlisted.example' }, digest(3), 0, NOW), 'untrusted');
  assert.equal(reader.verdict({ host: 'unlisted.example', commonName: 'api.example.com' }, digest(3), 0, NOW), 'untrusted');
  assert.equal(reader.verdict({ host: 'unlisted.example', commonName: 'other.example' }, digest(3), 0, NOW), 'trusted');
  assert.equal(reader.verdict({ host: 'api.example.com', commonName: '*.example.com' }, digest(2), 0, NOW), 'trusted');
  assert.equal(reader.verdict('api.example.com', digest(2), 0, NOW), 'untrusted'); // no certificate: H alone
});

test('an empty or missing host is untrusted in every question, whatever the common name', () => {
  const where = directory();
  publishPins(where, [pin('', b64(1)), pin('api.example.com', b64(1))],
    { domainsConfig: { sslPinningRequiredForUnlisted: false, domains: [] } });
  const reader = open(where);
  for (const peer of ['', { host: '', commonName: 'api.example.com' }, { commonName: 'api.example.com' }, { host: null }]) {
    assert.equal(reader.verdict(peer, digest(1), 0, NOW), 'untrusted');
    assert.equal(reader.verdictForChainDigests(peer, [digest(1)], NOW), 'untrusted');
    assert.equal(reader.admits(peer), false);
  }
});

test('expected names admit H or N and come before domainsConfig and an empty store', () => {
  const where = directory();
  const reader = open(where, { expectedCommonNames: ['API.example.com'] });
  assert.equal(reader.verdict('www.example.com', digest(1), 0, NOW), 'untrusted');
  assert.equal(reader.verdict('api.example.com', digest(1), 0, NOW), 'empty');
  assert.equal(reader.admits({ host: 'www.example.com', commonName: 'api.example.com' }), true);
  publishPins(where, [], { domainsConfig: { sslPinningRequiredForUnlisted: false, domains: [] } });
  assert.equal(reader.verdict('www.example.com', digest(1), 0, NOW), 'untrusted');
  assert.equal(open(where, { expectedCommonNames: [] }).verdict('api.example.com', digest(1), 0, NOW), 'untrusted');
});

test('pins apply only at their depth, and pins deeper than the chain are skipped', () => {
  const where = directory();
  publishPins(where,
    [pin('api.example.com', b64(1)), pin('api.example.com', b64(2), { depth: 1 }), pin('api.example.com', b64(3), { depth: 5 })]);
  const reader = open(where);
  assert.equal(reader.verdict('api.example.com', digest(2), 1, NOW), 'trusted');
  assert.equal(reader.verdict('api.example.com', digest(2), 0, NOW), 'untrusted');
  assert.equal(reader.verdictForChainDigests('api.example.com', [digest(9), digest(2)], NOW), 'trusted');
  assert.equal(reader.verdictForChainDigests('api.example.com', [digest(9)], NOW), 'untrusted');
  assert.equal(reader.verdict('api.example.com', digest(9), 3, NOW), 'empty');
  assert.throws(() => reader.verdict('api.example.com', digest(1), -1, NOW), TypeError);
  assert.throws(() => reader.verdict('api.example.com', Buffer.alloc(20), 0, NOW), TypeError);
});

test('a static store ignores domainsConfig and pins of a depth above zero', () => {
  const where = directory();
  publishPins(where, [pin('api.example.com', b64(1)), pin('api.example.com', b64(2), { depth: 1 })],
    { mode: 'static', domainsConfig: { sslPinningRequiredForUnlisted: false, domains: [] } });
  const reader = open(where);
  assert.equal(reader.verdict('api.example.com', digest(1), 0, NOW), 'trusted');
  assert.equal(reader.verdict('api.example.com', digest(2), 1, NOW), 'empty');
  assert.equal(reader.verdict('www.example.com', digest(1), 0, NOW), 'empty');
  assert.equal(reader.snapshot().cache.pinsInForce.length, 1);
});

test('a mode or format this reader does not know is refused (unsupported-format), never read as static', () => {
  const where = directory();
  publishPins(where, [pin('api.example.com', b64(1))]);
  const reader = open(where);
  const exemptAll = { sslPinningRequiredForUnlisted: false, domains: [] };
  for (const mode of ['future-mode', 'Static', 'static\u0000', '']) {
    publishPins(where, [pin('api.example.com', b64(2))], { mode, domainsConfig: exemptAll });
    assert.equal(reader.verdict('api.example.com', digest(1), 0, NOW), 'trusted', mode); // the last good version
    assert.equal(reader.verdict('api.example.com', digest(2), 0, NOW), 'untrusted', mode);
    assert.throws(() => reader.refresh(), (error) => error.code === 'unsupported-format' && error.kind === 'invalid', mode);
  }
  publish(where, JSON.stringify(cacheDocument([pin('api.example.com', b64(2))])).replace('"format":1', '"format":2'));
  assert.throws(() => reader.refresh(), (error) => error.code === 'unsupported-format' && /pinkeeper.format 2/.test(error.message));
});

test('fallback pins count after the cached ones, and their domainsConfig is ignored', () => {
  const where = directory();
  const fallbackFile = path.join(where, 'fallback.json');
  const exemptAll = { sslPinningRequiredForUnlisted: false, domains: [] };
  fs.writeFileSync(fallbackFile, JSON.stringify({ fingerprints: [pin('api.example.com', b64(2))], domainsConfig: exemptAll }));
  publishPins(where, [pin('api.example.com', b64(1))]);
  const reader = open(where, { fallbackFile });
  assert.equal(reader.verdict('api.example.com', digest(2), 0, NOW), 'trusted');
  assert.equal(reader.verdict('www.example.com', digest(2), 0, NOW), 'empty');
  fs.unlinkSync(path.join(where, `${STORE}.json`));
  assert.equal(reader.verdict('api.example.com', digest(1), 0, NOW), 'untrusted');
  assert.equal(reader.verdict('api.example.com', digest(2), 0, NOW), 'trusted');
  assert.throws(() => open(where, { fallbackFile: path.join(where, 'missing.json') }),
    (error) => error.code === 'missing' && /does not exist/.test(error.message));
  fs.writeFileSync(fallbackFile, '{"fingerprints": [1]}');
  assert.throws(() => readFallback(fallbackFile),
    (error) => error.kind === 'invalid' && /is not a Wultra fingerprint list: fingerprints\[0\] is not an object/.test(error.message));
});

test('a missing file means no cached pins until it appears', () => {
  const where = directory();
  const reader = open(where);
  assert.equal(reader.verdict('api.example.com', digest(1), 0, NOW), 'empty');
  assert.equal(reader.snapshot().cache, null);
  publishPins(where, [pin('api.example.com', b64(1))]);
  assert.equal(reader.verdict('api.example.com', digest(1), 0, NOW), 'trusted');
});

test('a new version is read; a file whose inode, size and time are unchanged is not read again', () => {
  const where = directory();
  const file = path.join(where, `${STORE}.json`);
  const time = 1763766400; // whole seconds, so that utimes can set the same time again
  publishPins(where, [pin('api.example.com', b64(1))]);
  fs.utimesSync(file, time, time);
  const reader = open(where);
  assert.equal(reader.verdict('api.example.com', digest(1), 0, NOW), 'trusted');
  // The same size and modification time, written in place (the daemon never does this): unseen.
  fs.writeFileSync(file, fs.readFileSync(file, 'utf8').replace(b64(1), b64(2)));
  fs.utimesSync(file, time, time);
  assert.equal(reader.verdict('api.example.com', digest(1), 0, NOW), 'trusted');
  publishPins(where, [pin('api.example.com', b64(2))]); // a rename: a new inode
  assert.equal(reader.verdict('api.example.com', digest(1), 0, NOW), 'untrusted');
  assert.equal(reader.verdict('api.example.com', digest(2), 0, NOW), 'trusted');
});

test('an invalid new version keeps the last good pins and says why, until a good one replaces it', () => {
  const where = directory();
  publishPins(where, [pin('api.example.com', b64(1))]);
  const reader = open(where);
  for (const [content, reason] of [
    ['not json{', 'is not a pinkeeper cache file: not valid JSON'],
    [JSON.stringify(cacheDocument([pin('api.example.com', b64(2))], { store: 'other' })), "belongs to store 'other', not 'banking'"],
    [JSON.stringify({ fingerprints: [] }), 'the "pinkeeper" metadata object is missing'],
  ]) {
    publish(where, content);
    assert.equal(reader.verdict('api.example.com', digest(1), 0, NOW), 'trusted');
    const { problem } = reader.snapshot();
    assert.ok(problem instanceof CacheReaderError && problem.kind === 'invalid' && problem.message.includes(reason), String(problem));
    assert.throws(() => reader.refresh(), CacheReaderError);
  }
  publishPins(where, [pin('api.example.com', b64(2))]);
  assert.equal(reader.verdict('api.example.com', digest(2), 0, NOW), 'trusted');
  assert.equal(reader.snapshot().problem, null);
});

test('an invalid file at start is an error naming the file and the field', () => {
  const where = directory();
  publish(where, JSON.stringify(cacheDocument([{ name: 'api.example.com', fingerprint: b64(1), expires: '1' }])));
  assert.throws(() => open(where), (error) => error instanceof CacheReaderError && error.kind === 'invalid'
    && error.message === `${path.join(where, `${STORE}.json`)} is not a pinkeeper cache file: fingerprints[0].expires is not an integer; `
      + 'publish a good version with `pinkeeper update`');
  assert.throws(() => CacheReader.forStore('../etc', { cacheDirectory: where }), TypeError);
});

test('a symlink at the cache path is refused, never followed, even when it points at a good file', () => {
  const where = directory();
  const good = path.join(where, 'elsewhere.json');
  fs.writeFileSync(good, JSON.stringify(cacheDocument([pin('api.example.com', b64(1))])));
  fs.symlinkSync(good, path.join(where, `${STORE}.json`));
  assert.throws(() => open(where),
    (error) => error.code === 'symlink' && error.kind === 'unreadable' && /is a symlink, which is never followed/.test(error.message));
  fs.unlinkSync(path.join(where, `${STORE}.json`));
  fs.symlinkSync(path.join(where, 'dangling'), path.join(where, `${STORE}.json`));
  assert.throws(() => open(where), /is a symlink/);
});

function mkfifo(file) {
  execFileSync('mkfifo', [file]);
}

/** `planted` takes the place of the cache file by a rename, as an attacker with write access to the directory could. */
function plant(where, make) {
  const planted = path.join(where, 'planted');
  make(planted);
  fs.renameSync(planted, path.join(where, `${STORE}.json`));
}

test('a FIFO at the cache path is refused at once, with or without a writer', () => {
  const where = directory();
  plant(where, mkfifo);
  const started = Date.now();
  assert.throws(() => open(where),
    (error) => error.code === 'not-regular-file' && error.kind === 'unreadable' && /is not a regular file/.test(error.message));
  const writer = fs.openSync(path.join(where, `${STORE}.json`), fs.constants.O_RDWR | fs.constants.O_NONBLOCK); // never blocks on Linux
  try {
    assert.throws(() => open(where), /is not a regular file/);
  } finally {
    fs.closeSync(writer);
  }
  assert.ok(Date.now() - started < 2000);
});

test('a FIFO, symlink or directory replacing a good version leaves the last good pins in use', () => {
  const where = directory();
  publishPins(where, [pin('api.example.com', b64(1))]);
  const reader = open(where);
  const good = path.join(where, 'good.json');
  fs.writeFileSync(good, JSON.stringify(cacheDocument([pin('api.example.com', b64(2))])));
  const plants = [
    [mkfifo, 'is not a regular file'], [(file) => fs.symlinkSync(good, file), 'is a symlink'], [fs.mkdirSync, 'is not a regular file'],
  ];
  for (const [make, reason] of plants) {
    plant(where, make);
    assert.equal(reader.verdict('api.example.com', digest(1), 0, NOW), 'trusted');
    assert.equal(reader.verdict('api.example.com', digest(2), 0, NOW), 'untrusted');
    assert.match(reader.snapshot().problem.message, new RegExp(reason));
    fs.rmSync(path.join(where, `${STORE}.json`), { recursive: true });
  }
});

test('a file over 64 MiB is refused without being read', () => {
  const where = directory();
  const big = path.join(where, 'big');
  fs.writeFileSync(big, '');
  fs.truncateSync(big, 64 * 1024 * 1024 + 1); // sparse
  fs.renameSync(big, path.join(where, `${STORE}.json`));
  assert.throws(() => open(where),
    (error) => error.code === 'too-large' && error.kind === 'invalid' && /is larger than 67108864 bytes/.test(error.message));
});

test('the fallback file may be a symlink, but what it names must be a regular file', () => {
  const where = directory();
  const target = path.join(where, 'fallback-target.json');
  fs.writeFileSync(target, JSON.stringify({ fingerprints: [pin('api.example.com', b64(1))] }));
  fs.symlinkSync(target, path.join(where, 'fallback.json'));
  assert.equal(readFallback(path.join(where, 'fallback.json')).length, 1);
  mkfifo(path.join(where, 'fifo'));
  assert.throws(() => readFallback(path.join(where, 'fifo')), /is not a regular file/);
});

/** Whether `error` is an insecure-permissions refusal naming `file`. */
const insecure = (file) => (error) => error.code === 'insecure-permissions' && error.kind === 'unreadable' && error.path === file
  && /could plant pins/.test(error.message);

test('a cache file others may write, or in a directory they may write without the sticky bit, is refused at every read', () => {
  const where = directory();
  const file = path.join(where, `${STORE}.json`);
  publishPins(where, [pin('api.example.com', b64(1))]);
  const reader = open(where);
  fs.chmodSync(file, 0o646); // the same version made writable by others: looked at again and refused
  assert.throws(() => reader.refresh(), insecure(file));
  assert.equal(reader.verdict('api.example.com', digest(1), 0, NOW), 'trusted'); // the last good pins stay
  fs.chmodSync(file, 0o664); // group-writable: the group is the operator's
  assert.doesNotThrow(() => reader.refresh());
  fs.chmodSync(where, 0o757);
  publishPins(where, [pin('api.example.com', b64(2))]);
  assert.throws(() => reader.refresh(), (error) => insecure(file)(error) && error.message.includes('without the sticky bit'));
  assert.equal(reader.verdict('api.example.com', digest(2), 0, NOW), 'untrusted');
  fs.chmodSync(where, 0o1777); // sticky, as /tmp: others cannot rename over a file of the daemon's
  publishPins(where, [pin('api.example.com', b64(2))]);
  assert.equal(reader.verdict('api.example.com', digest(2), 0, NOW), 'trusted');
  fs.chmodSync(where, 0o755);
  assert.throws(() => open(where, { fallbackFile: path.join(where, 'missing.json') }), (error) => error.code === 'missing');
});

test('a fallback file others may write, or its target through a symlink or their directories, is refused', () => {
  const where = directory();
  const elsewhere = directory();
  const fallbackFile = path.join(where, 'fallback.json');
  fs.writeFileSync(fallbackFile, JSON.stringify({ fingerprints: [pin('api.example.com', b64(1))] }));
  assert.equal(readFallback(fallbackFile).length, 1);
  fs.chmodSync(fallbackFile, 0o666);
  assert.throws(() => open(where, { fallbackFile }), insecure(fallbackFile));
  fs.chmodSync(fallbackFile, 0o644);
  fs.renameSync(fallbackFile, path.join(elsewhere, 'target.json'));
  fs.symlinkSync(path.join(elsewhere, 'target.json'), fallbackFile);
  assert.equal(readFallback(fallbackFile).length, 1);
  fs.chmodSync(elsewhere, 0o777);
  assert.throws(() => readFallback(fallbackFile), insecure(fallbackFile));
  fs.chmodSync(elsewhere, 0o755);
});

test('a question on an unchanged file costs one lstat, and opens, reads and stats nothing else', () => {
  const where = directory();
  publishPins(where, [pin('api.example.com', b64(1))]);
  const reader = open(where);
  const calls = [];
  const watched = ['lstatSync', 'statSync', 'openSync', 'fstatSync', 'readSync', 'realpathSync'];
  const originals = Object.fromEntries(watched.map((name) => [name, fs[name]]));
  for (const name of watched) {
    fs[name] = (...args) => {
      calls.push(name);
      return originals[name](...args);
    };
  }
  try {
    assert.equal(reader.verdict('API.example.com.', digest(1), 0, NOW), 'trusted');
    assert.equal(reader.verdict('api.example.com', digest(2), 0, NOW), 'untrusted');
  } finally {
    Object.assign(fs, originals);
  }
  assert.deepEqual(calls, ['lstatSync', 'lstatSync']);
});
