'use strict';
// `pinkeeper-reader validate` (bin/pinkeeper-reader.js) plays the shared table
// Tests/Conformance/cases.json: every `options` row against `options_cache`, and every case's
// `expected_command` against the case's last files, with the exit status and the first word the
// table gives. The command runs as a real process at the case's "now": a test-only preload
// (support/fixed-now.js) fixes Date.now, since the shipped command has no way to set its time.
//
// A question with a verified chain or a common name is asked with --certificate: certificates
// are made here (the leaf's common name is the case's, or H in its one form when the case has
// none, so that N adds nothing), and each fingerprint of the question is replaced by that of the
// certificate standing for it, in the cache and fallback files.

const assert = require('node:assert/strict');
const { execFile } = require('node:child_process');
const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');
const { describe, it, after } = require('node:test');
const { canonicalHost } = require('..');
const { STORE, loadTable, versionOf, modeOf, publish, temporaryDirectory, writeFallback } = require('./support/cases');
const { TestPki } = require('./support/pki');

const BIN = path.join(__dirname, '..', 'bin', 'pinkeeper-reader.js');
const FIXED_NOW = path.join(__dirname, 'support', 'fixed-now.js');
const table = loadTable();
const directories = [];
after(() => directories.forEach((directory) => fs.rmSync(directory, { recursive: true, force: true })));

function workspace(mode = 0o755) {
  const made = temporaryDirectory('pinkeeper-command-', mode);
  directories.push(made);
  return made;
}

const pki = new TestPki(workspace(0o700));
let certificatesMade = 0;

/** A self-signed certificate whose subject is CN=`commonName` (no subject name when empty): { pem, fingerprint }. */
function certificate(commonName) {
  const file = pki.file(`certificate-${certificatesMade++}.pem`);
  const escapedName = commonName.replace(/[\\/+=,]/g, (character) => `\\${character}`);
  const subject = commonName === '' ? '/O=pinkeeper test' : `/CN=${escapedName}`;
  pki.openssl('req', '-x509', '-new', '-key', pki.key('shared'), '-utf8', '-subj', subject, '-days', '30', '-out', file);
  const pem = fs.readFileSync(file, 'latin1');
  return { pem, fingerprint: crypto.createHash('sha256').update(new crypto.X509Certificate(pem).raw).digest('base64') };
}

/**
 * How the command asks the case's question: its options, and the fingerprints of the table to
 * replace with those of the certificates made for it.
 */
function commandQuestion(testCase, directory) {
  const { question } = testCase;
  const name = ['--name', question.name];
  if ('certificate_pem' in question) {
    fs.writeFileSync(path.join(directory, 'leaf.pem'), question.certificate_pem);
    return { args: [...name, '--certificate', path.join(directory, 'leaf.pem')], replaced: new Map() };
  }
  if (!('verified_chain' in question) && !('common_name' in question)) {
    const depth = question.depth === undefined ? [] : ['--depth', String(question.depth)];
    return { args: [...name, '--fingerprint', question.fingerprint, ...depth], replaced: new Map() };
  }
  // A chain file stands for the verified chain: a depth other than 0 has no place in it.
  assert.ok(!('depth' in question), 'a common name with a depth cannot be asked with --certificate');
  const digests = question.verified_chain ?? [question.fingerprint];
  const leafName = question.common_name ?? canonicalHost(question.name) ?? question.name;
  const made = digests.map((_, depth) => certificate(depth === 0 ? leafName : `pinkeeper chain ${depth}`));
  fs.writeFileSync(path.join(directory, 'chain.pem'), made.map(({ pem }) => pem).join(''));
  const replaced = new Map(digests.map((digest, depth) => [digest, made[depth].fingerprint]));
  return { args: [...name, '--certificate', path.join(directory, 'chain.pem')], replaced };
}

/** `bytes` with every fingerprint of `replaced` (base64 text) written as its replacement. */
function withReplacements(bytes, replaced) {
  let text = bytes.toString('latin1');
  for (const [from, to] of replaced) text = text.replaceAll(from, to);
  return Buffer.from(text, 'latin1');
}

/** Writes the case's last files into a fresh directory and returns the command line that asks its question. */
function prepareCase(testCase) {
  const directory = workspace();
  const { args, replaced } = commandQuestion(testCase, directory);
  const store = workspace(modeOf(testCase.directory_mode, 0o755)); // beside the question's files, alone
  const version = versionOf(testCase);
  if (version !== null) publish(store, withReplacements(version, replaced), STORE, modeOf(testCase.cache_mode, 0o644));
  const fallbackText = 'fallback' in testCase ? withReplacements(Buffer.from(JSON.stringify(testCase.fallback)), replaced) : undefined;
  const fallbackFile = writeFallback(testCase, store, fallbackText);
  const more = fallbackFile === null ? [] : ['--fallback-file', fallbackFile];
  const names = testCase.expected_common_names;
  if (names !== undefined) more.push(...(names.length === 0 ? [''] : names).flatMap((name) => ['--expected-common-name', name]));
  return ['--cache-directory', store, '--store', STORE, ...args, ...more];
}

/** Runs the command at `now`: { status, stdout, stderr }. */
function runCommand(args, now) {
  const env = { ...process.env, PINKEEPER_TEST_NOW: String(now) };
  return new Promise((resolve) => {
    execFile(process.execPath, ['--require', FIXED_NOW, BIN, 'validate', ...args], { env, encoding: 'utf8', timeout: 60000 },
      (error, stdout, stderr) => resolve({ status: error ? error.code : 0, stdout, stderr }));
  });
}

/**
 * What the table compares: the status, and the first word of standard output (statuses 0–2) or
 * the word after `pinkeeper: ` on the first line of standard error, each ending at a space, `:`
 * or the end of the line.
 */
function outcome({ status, stdout, stderr }) {
  const line = [0, 1, 2].includes(status) ? stdout.split('\n')[0] : stderr.split('\n')[0].replace(/^pinkeeper: /, '');
  return { status, word: line.split(/[\s:]/)[0] };
}

async function expectOutcome(args, now, expected) {
  const result = await runCommand(args, now);
  assert.deepEqual(outcome(result), expected, `${args.join(' ')}\n${JSON.stringify(result)}`);
  if (![0, 1, 2].includes(result.status)) {
    assert.match(result.stderr, /^pinkeeper: /);
    assert.equal(result.stdout, '');
  }
  // A refused file is named with its store, and the message says what to do.
  if ([65, 74].includes(result.status)) assert.match(result.stderr, /^pinkeeper: [a-z-]+: store 'banking': \/\S+ .+; [a-z]/);
}

describe('the command line plays every options row', { concurrency: 4 }, () => {
  const { options_cache: optionsCache, options } = table;
  const store = workspace();
  publish(store, JSON.stringify(optionsCache.cache), optionsCache.store);
  for (const row of options) {
    it(row.id, () => expectOutcome(['--cache-directory', store, '--store', optionsCache.store, ...row.args], optionsCache.now,
      row.expected_command));
  }
});

describe('the command line plays every case\'s expected_command', { concurrency: 4 }, () => {
  for (const testCase of table.cases) {
    it(testCase.id, () => expectOutcome(prepareCase(testCase), testCase.now, testCase.expected_command));
  }
});

describe('the time of the command line', () => {
  it('is the clock\'s without the test preload: a pin expired long ago never matches', async () => {
    const { options_cache: optionsCache } = table;
    const store = workspace();
    publish(store, JSON.stringify(optionsCache.cache), optionsCache.store);
    const question = ['--cache-directory', store, '--store', optionsCache.store, ...table.options[0].args];
    const pinExpires = optionsCache.cache.fingerprints[0].expires;
    assert.ok(Date.now() / 1000 > pinExpires, 'the table\'s pin must have expired for this test to mean anything');
    const now = await new Promise((resolve) => {
      execFile(process.execPath, [BIN, 'validate', ...question], { encoding: 'utf8' },
        (error, stdout) => resolve({ status: error?.code ?? 0, stdout }));
    });
    assert.deepEqual([now.status, now.stdout.split(':')[0]], [2, 'empty']);
    await expectOutcome(question, optionsCache.now, { status: 0, word: 'trusted' });
  });
});
