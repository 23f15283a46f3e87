'use strict';
// `pinkeeper-reader validate`: output and exit statuses, in process and through the bin.

const assert = require('node:assert/strict');
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { test, after } = require('node:test');
const { run } = require('../lib/validate-command');
const { STORE, temporaryDirectory } = require('./support/cases');
const { pin, publishPins } = require('./support/caches');
const { TestPki } = require('./support/pki');

const BIN = path.join(__dirname, '..', 'bin', 'pinkeeper-reader.js');
const directory = temporaryDirectory('pinkeeper-cli-');
after(() => fs.rmSync(directory, { recursive: true, force: true }));
const pki = new TestPki(directory);
const cacheDirectory = path.join(directory, 'cache');
fs.mkdirSync(cacheDirectory);

const b64 = (byte) => Buffer.alloc(32, byte).toString('base64');
const PINNED = b64(1);

/** Runs the command in process: { status, out, err }. */
function cli(...args) {
  let out = '';
  let err = '';
  const status = run(args, { out: { write: (text) => { out += text; } }, err: { write: (text) => { err += text; } } });
  return { status, out, err };
}

const validate = (...more) => cli('validate', '--cache-directory', cacheDirectory, '--store', STORE, ...more);

function publishDefault() {
  publishPins(cacheDirectory, [pin('api.example.com', PINNED), pin('api.example.com', b64(2), { depth: 1 })]);
}

test('the three verdicts and their exit statuses', () => {
  publishDefault();
  assert.deepEqual(validate('--name', 'api.example.com', '--fingerprint', PINNED), { status: 0, out: 'trusted\n', err: '' });
  assert.deepEqual(validate('--name', 'api.example.com', '--fingerprint', b64(3)),
    { status: 1, out: "untrusted: store 'banking' pins 'api.example.com', but not this certificate\n", err: '' });
  assert.deepEqual(validate('--name', 'other.example.com', '--fingerprint', PINNED),
    {
      status: 2,
      out: "empty: store 'banking' has no valid pin for 'other.example.com'; reject, and run `pinkeeper update --store banking`\n",
      err: '',
    });
});

test('an empty name is a usage error, as in pinkeeper validate', () => {
  publishPins(cacheDirectory, [pin('', PINNED), pin('api.example.com', PINNED)]);
  const result = validate('--name', '', '--fingerprint', PINNED);
  assert.equal(result.status, 64);
  assert.equal(result.out, '');
  assert.ok(result.err.startsWith('pinkeeper: usage: --name must be the host a client connects to, not empty\nusage: '), result.err);
});

test('depth, hex and expected names', () => {
  publishDefault();
  const hex = Buffer.alloc(32, 2).toString('hex').toUpperCase().match(/../g).join(':');
  assert.equal(validate('--name', 'api.example.com', '--fingerprint', hex, '--depth', '1').status, 0);
  assert.equal(validate('--name', 'api.example.com', `--fingerprint=${hex}`).status, 1);
  assert.deepEqual(validate('--name', 'api.example.com', '--fingerprint', PINNED, '--expected-common-name', 'www.example.com'),
    { status: 1, out: "untrusted: 'api.example.com' is not among the expected_common_names of store 'banking'\n", err: '' });
  assert.equal(validate('--name', 'API.example.com', '--fingerprint', PINNED, '--expected-common-name', 'api.EXAMPLE.com').status, 0);
});

test('a certificate file is listed, then checked, with the leaf\'s common name as N', () => {
  const leaf = pki.selfSigned('listed', '/CN=www.example.com/O=Example', ['basicConstraints=CA:FALSE']);
  publishPins(cacheDirectory, [pin('api.example.com', leaf.fingerprint)]);
  const result = validate('--name', 'api.example.com', '--certificate', leaf.certificateFile);
  const expires = Date.parse(new (require('node:crypto').X509Certificate)(leaf.pem).validTo) / 1000;
  const iso = new Date(expires * 1000).toISOString().replace('.000Z', 'Z');
  assert.deepEqual(result, {
    status: 0,
    out: `trusted\ndepth 0: O=Example,CN=www.example.com  sha256 ${leaf.fingerprint}  expires ${expires} (${iso})\n`
      + "note: the leaf's common name 'www.example.com' differs from --name 'api.example.com': pins under either are compared, "
      + 'and pinning is skipped only if domainsConfig exempts both\n',
    err: '',
  });
});

test('the host decides, and a certificate\'s common name only adds pins', () => {
  const exempt = pki.selfSigned('exempt', '/CN=unlisted.example', ['basicConstraints=CA:FALSE']);
  const wildcard = pki.selfSigned('wildcard', '/CN=*.example.com', ['basicConstraints=CA:FALSE']);
  publishPins(cacheDirectory, [pin('api.example.com', PINNED), pin('*.example.com', wildcard.fingerprint)], {
    domainsConfig: { sslPinningRequiredForUnlisted: false, domains: [{ name: 'api.example.com', sslPinningRequired: true }] },
  });
  const attack = validate('--name', 'api.example.com', '--certificate', exempt.certificateFile);
  assert.equal(attack.status, 1);
  const expected = "untrusted: store 'banking' pins 'api.example.com' (certificate common name 'unlisted.example'), "
    + 'but not this certificate\n';
  assert.ok(attack.out.startsWith(expected), attack.out);
  assert.deepEqual(validate('--name', 'unlisted.example', '--fingerprint', exempt.fingerprint), { status: 0, out: 'trusted\n', err: '' });
  assert.equal(validate('--name', 'API.example.com', '--certificate', wildcard.certificateFile).status, 0);
  assert.equal(validate('--name', 'api.example.com', '--fingerprint', wildcard.fingerprint).status, 1);
  const refused = validate('--name', 'localhost', '--certificate', exempt.certificateFile, '--expected-common-name', 'api.example.com');
  const notExpected = "untrusted: 'localhost' (certificate common name 'unlisted.example') "
    + "is not among the expected_common_names of store 'banking'\n";
  assert.ok(refused.out.startsWith(notExpected), refused.out);
});

test('names in the output are H in its one form, escaped', () => {
  publishDefault();
  assert.equal(validate('--name', 'api\u200e.Example\n.com', '--fingerprint', PINNED).out,
    "empty: store 'banking' has no valid pin for 'xn--api-kn0a.example\\n.com'; reject, and run `pinkeeper update --store banking`\n");
  assert.deepEqual(validate('--name', '[::1\u202e]', '--fingerprint', PINNED), {
    status: 1,
    out: "untrusted: '[::1\\u{202e}]' has no one spelling (docs/protocol.md, \"H in one spelling\"), so nothing is looked up for it\n",
    err: '',
  });
});

test('usage errors exit with 64, help with 0', () => {
  publishDefault();
  for (const args of [
    ['--name', 'api.example.com'],
    ['--name', 'api.example.com', '--fingerprint', PINNED, '--certificate', 'x.pem'],
    ['--name', 'api.example.com', '--certificate', 'x.pem', '--depth', '1'],
    ['--name', 'api.example.com', '--fingerprint', PINNED, '--depth', '-1'],
    ['--name', 'api.example.com', '--fingerprint', PINNED, '--depth', 'one'],
    ['--name', 'api.example.com', '--fingerprint', 'AAAA'],
    ['--name', 'api.example.com', '--fingerprint', PINNED.replace('=', '')],
    ['--name', 'api.example.com', '--fingerprint', PINNED, '--colour'],
    ['--name', 'api.example.com', '--fingerprint'],
    ['--name', 'api.example.com', '--name', 'www.example.com', '--fingerprint', PINNED],
    ['--name', 'api.example.com', '--fingerprint', PINNED, '--depth', '0', '--depth', '1'],
    ['--name', 'api.example.com', '--fingerprint', `${'01:'.repeat(31)}01`.replaceAll(':', '').replace(/^(..)/, '$1:')],
  ]) {
    const result = validate(...args);
    assert.equal(result.status, 64, args.join(' '));
    assert.ok(result.err.startsWith('pinkeeper: usage: ') && result.err.includes('\nusage: pinkeeper-reader validate'), result.err);
  }
  assert.equal(cli('validate', '--store', '../etc/passwd', '--name', 'a', '--fingerprint', PINNED).status, 64);
  assert.equal(cli('status').status, 64);
  assert.equal(cli().status, 64);
  const help = cli('validate', '--help');
  assert.equal(help.status, 0);
  assert.ok(help.out.startsWith('usage: pinkeeper-reader validate'));
});

test('help says the pins of a removed signing key still count, and they do', () => {
  // The file names the key that verified each pin, not the keys still configured: a pin of a key
  // the operator has since removed decides here until the daemon rewrites the file without it.
  const kept = { ...pin('api.example.com', PINNED), key: '3f1c0c6a9b2e4d71' };
  const removed = { ...pin('api.example.com', b64(3)), key: '0123456789abcdef' };
  publishPins(cacheDirectory, [kept, removed]);
  for (const entry of [kept, removed]) {
    assert.deepEqual(validate('--name', 'api.example.com', '--fingerprint', entry.fingerprint), { status: 0, out: 'trusted\n', err: '' });
  }
  for (const asked of [['--help'], ['validate', '--help']]) {
    const text = execFileSync(process.execPath, [BIN, ...asked]).toString().replace(/\s+/g, ' ');
    assert.ok(text.includes("Reads no configuration: after a signing key is removed from the daemon's configuration, its pins "
      + 'and its domainsConfig still decide here until the daemon drops them from the file'), text);
    assert.ok(text.includes('`pinkeeper validate` without --cache-directory counts only what the configured keys vouch for'), text);
  }
});

test('unusable files exit with 65, 66 and 74', () => {
  publishDefault();
  assert.equal(validate('--name', 'api.example.com', '--certificate', path.join(directory, 'missing.pem')).status, 66);
  assert.equal(validate('--name', 'api.example.com', '--certificate', directory).status, 66);
  fs.writeFileSync(path.join(directory, 'garbage.pem'), '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n');
  assert.equal(validate('--name', 'api.example.com', '--certificate', path.join(directory, 'garbage.pem')).status, 65);
  fs.writeFileSync(path.join(directory, 'fallback.json'), '{"fingerprints": 1}');
  assert.equal(validate('--name', 'api.example.com', '--fingerprint', PINNED,
    '--fallback-file', path.join(directory, 'fallback.json')).status, 65);
  const file = path.join(cacheDirectory, `${STORE}.json`);
  fs.writeFileSync(file, 'not json');
  assert.deepEqual(validate('--name', 'api.example.com', '--fingerprint', PINNED), {
    status: 65,
    out: '',
    err: `pinkeeper: not-json: store 'banking': ${file} is not a pinkeeper cache file: not valid JSON (unexpected character at 0); `
      + 'publish a good version with `pinkeeper update`\n',
  });
  fs.unlinkSync(file);
  fs.mkdirSync(file);
  assert.equal(validate('--name', 'api.example.com', '--fingerprint', PINNED).status, 74);
  fs.rmdirSync(file);
});

test('the bin runs with node and sets the exit status', () => {
  publishDefault();
  for (const [fingerprint, status, start] of [[PINNED, 0, 'trusted\n'], [b64(3), 1, 'untrusted: ']]) {
    let output;
    let code = 0;
    try {
      const args = ['validate', '--cache-directory', cacheDirectory, '--store', STORE,
        '--name', 'api.example.com', '--fingerprint', fingerprint];
      output = execFileSync(process.execPath, [BIN, ...args]).toString();
    } catch (error) {
      ({ status: code } = error);
      output = error.stdout.toString();
    }
    assert.equal(code, status);
    assert.ok(output.startsWith(start), output);
  }
  const packageJson = JSON.parse(fs.readFileSync(path.join(__dirname, '..', 'package.json'), 'utf8'));
  assert.equal(path.resolve(__dirname, '..', packageJson.bin['pinkeeper-reader']), BIN);
  assert.equal(fs.readFileSync(BIN, 'utf8').split('\n')[0], '#!/usr/bin/env node');
  assert.ok(fs.statSync(BIN).mode & 0o111, 'the bin is executable');
});
