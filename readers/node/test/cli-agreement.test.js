'use strict';
// `pinkeeper-reader validate` against the Swift `pinkeeper validate` ($PINKEEPER_BINARY, which
// `make test-node` builds and sets; else a debug build if there is one): every case of the
// conformance table, and certificate files, asked of both, with the same exit status, verdict
// line and notes.
//
// A command line has no "now": each case's times are moved so that its "now" is the current
// second (a case is asked again if the second changes before both answered). `pinkeeper validate`
// reads its store from a configuration and reconciles the file with it (pins of keys the
// configuration does not list never count, and a static store's pins must carry signatures
// that verify): the cases where that gives another answer are listed, with the reason, and
// must give another answer.

const assert = require('node:assert/strict');
const { execFile } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const util = require('node:util');
const { describe, it, after } = require('node:test');
const { REPOSITORY, STORE, loadCases, versionOf, temporaryDirectory } = require('./support/cases');
const { TestPki } = require('./support/pki');

const BIN = path.join(__dirname, '..', 'bin', 'pinkeeper-reader.js');
// Any valid P-256 point: no case's pin records its key id.
const PUBLIC_KEY = 'BC3kV9OIDnMuVoCdDR9nEA/JidJLTTDLuSA2TSZsGgODSshfbZg31MS90WC/HdbU/A5WL5GmyDkE/iks6INv+XE=';

function swiftBinary() {
  const given = process.env.PINKEEPER_BINARY;
  if (given) {
    fs.accessSync(given, fs.constants.X_OK); // make test-node names it: it must exist
    return given;
  }
  const built = path.join(REPOSITORY, '.build', 'debug', 'pinkeeper');
  try {
    fs.accessSync(built, fs.constants.X_OK);
    return built;
  } catch {
    return null;
  }
}

/** Where the Swift command answers otherwise, because it reconciles the file with its configuration first (and one list no option can give). */
const RECONCILED = {
  'unknown-fields-are-ignored': 'its pin records key "k1", which the configuration does not list',
  'per-entry-key-is-ignored': 'its pins record keys the configuration does not list',
  'unknown-mode-honours-no-unsigned-extras': 'the Swift reader refuses a file of a mode it does not know (65)',
  'mode-names-are-case-sensitive': 'the Swift reader refuses a file of a mode it does not know (65)',
  'static-mode-ignores-domains-config': 'a static pin without a signature that verifies is dropped',
  'static-mode-leaf-pin-is-trusted': 'a static pin without a signature that verifies is dropped',
  'static-mode-depth-pin-does-not-rescue-a-leaf-mismatch': 'a static pin without a signature that verifies is dropped',
  // Not a reconciliation: this command line (as the Java one) has no way to give an empty list.
  'empty-expected-names-reject-every-name': 'no --expected-common-name means any name; the configuration can say []',
};

const binary = swiftBinary();
const directories = [];
after(() => directories.forEach((directory) => fs.rmSync(directory, { recursive: true, force: true })));

function workspace() {
  const made = temporaryDirectory('pinkeeper-agreement-');
  directories.push(made);
  fs.mkdirSync(path.join(made, 'cache'));
  return made;
}

/** A case's document with every pin's `expires` moved by `shift` seconds. */
function shifted(document, shift) {
  const copy = structuredClone(document);
  for (const entry of Array.isArray(copy?.fingerprints) ? copy.fingerprints : []) {
    if (Number.isInteger(entry?.expires)) entry.expires += shift;
  }
  return copy;
}

/** The bytes of a version with each `"expires": <integer>` moved by `shift` (invalid versions stay invalid). */
function shiftedBytes(bytes, shift) {
  const text = bytes.toString('latin1').replace(/("expires"\s*:\s*)(-?[0-9]+)(?![0-9.eE])/g,
    (_, key, value) => `${key}${BigInt(value) + BigInt(shift)}`);
  return Buffer.from(text, 'latin1');
}

const toml = (value) => JSON.stringify(value); // these strings are TOML basic strings too

/** Writes the case's files, its times moved by `shift`, and returns what both commands need. */
function prepare(testCase, directory, shift) {
  const cacheFile = path.join(directory, 'cache', `${STORE}.json`);
  fs.rmSync(cacheFile, { force: true });
  const version = 'cache' in testCase ? Buffer.from(JSON.stringify(shifted(testCase.cache, shift)))
    : versionOf(testCase) !== null ? shiftedBytes(versionOf(testCase), shift) : null;
  // The command reads one version: the previous one only when the case removes the file.
  if (version !== null) fs.writeFileSync(cacheFile, version);
  const config = [`cache_directory = ${toml(path.join(directory, 'cache'))}`, `state_directory = ${toml(path.join(directory, 'state'))}`,
    `[stores.${STORE}]`, 'url = "https://pins.example.com/list"', `public_key = ${toml(PUBLIC_KEY)}`];
  const ours = ['--cache-directory', path.join(directory, 'cache'), '--store', STORE];
  if (testCase.cache?.pinkeeper?.mode === 'static') config.push('mode = "static"');
  if ('fallback' in testCase) {
    const fallback = path.join(directory, 'fallback.json');
    fs.writeFileSync(fallback, JSON.stringify(shifted(testCase.fallback, shift)));
    config.push(`fallback_file = ${toml(fallback)}`);
    ours.push('--fallback-file', fallback);
  }
  if ('expected_common_names' in testCase) {
    config.push(`expected_common_names = [${testCase.expected_common_names.map(toml).join(', ')}]`);
    ours.push(...testCase.expected_common_names.map((name) => `--expected-common-name=${name}`));
  }
  fs.writeFileSync(path.join(directory, 'pinkeeper.toml'), `${config.join('\n')}\n`);
  return { swift: ['validate', '--config', path.join(directory, 'pinkeeper.toml'), '--store', STORE], ours };
}

/** The command-line questions of a case: a chain becomes one question per depth; a PEM leaf a file. */
function questions(testCase, directory) {
  const { question } = testCase;
  const name = ['--name', question.name];
  const at = (fingerprint, depth) => [...name, '--fingerprint', fingerprint, ...(depth === undefined ? [] : ['--depth', String(depth)])];
  if ('fingerprint' in question) return [at(question.fingerprint, question.depth)];
  if ('verified_chain' in question) return question.verified_chain.map(at);
  const file = path.join(directory, 'leaf.pem');
  fs.writeFileSync(file, question.certificate_pem);
  return [[...name, '--certificate', file]];
}

function runCommand(file, args) {
  return new Promise((resolve) => {
    execFile(file, args, { encoding: 'utf8', timeout: 60000 }, (error, stdout, stderr) => {
      resolve({ status: error ? error.code : 0, stdout, stderr });
    });
  });
}

/** What both must agree on: the exit status, the last line (the verdict), and the notes. */
function answer({ status, stdout }) {
  const lines = stdout.split('\n').filter(Boolean);
  return { status, verdict: [0, 1, 2].includes(status) ? lines.at(-1) : '', notes: lines.filter((line) => line.startsWith('note: ')) };
}

const now = () => Math.floor(Date.now() / 1000);

/** Asks both commands every question of the case in one second of the clock (retried otherwise). */
async function askBoth(testCase) {
  const directory = workspace();
  for (let attempt = 1; ; attempt++) {
    const second = now();
    const commands = prepare(testCase, directory, second - testCase.now);
    const answers = [];
    for (const question of questions(testCase, directory)) {
      const [swift, ours] = await Promise.all([
        runCommand(binary, [...commands.swift, ...question]),
        runCommand(process.execPath, [BIN, 'validate', ...commands.ours, ...question]),
      ]);
      answers.push({ question, swift, ours });
    }
    if (now() === second || attempt === 5) return answers;
  }
}

const asked = (answers) => answers
  .map(({ question, swift, ours }) => `${question.join(' ')}\nswift: ${JSON.stringify(swift)}\nnode: ${JSON.stringify(ours)}`)
  .join('\n');

describe('agreement with the Swift pinkeeper validate on every conformance case', { concurrency: 2 }, () => {
  for (const testCase of loadCases()) {
    it(testCase.id, { skip: binary === null && 'no Swift pinkeeper binary (build it, or set PINKEEPER_BINARY)' }, async () => {
      const answers = await askBoth(testCase);
      const differs = answers.some(({ swift, ours }) => !util.isDeepStrictEqual(answer(swift), answer(ours)));
      if (testCase.id in RECONCILED) {
        assert.ok(differs, `listed as answered otherwise (${RECONCILED[testCase.id]}), but both agree:\n${asked(answers)}`);
        return;
      }
      for (const { swift, ours } of answers) assert.deepEqual(answer(ours), answer(swift), asked(answers));
      // A question the command line asks as the case does (H alone, one version) has the case's answer.
      const { question } = testCase;
      const same = 'fingerprint' in question && !('common_name' in question) && !('previous_cache' in testCase);
      if (same && [0, 1, 2].includes(answers[0].ours.status)) {
        assert.equal(answers[0].ours.stdout.split('\n').filter(Boolean).at(-1).split(':')[0], testCase.expected, testCase.rule);
      }
    });
  }
});


describe('agreement with the Swift pinkeeper validate on certificate files', { concurrency: 2 }, () => {
  const directory = workspace();
  const pki = new TestPki(directory);
  const leaf = () => pki.selfSigned('leaf', '/CN=www.example.com/O=Example\\, Inc.+OU=Ops/C=DE', ['basicConstraints=CA:FALSE'], ['-multivalue-rdn']);
  const files = {};
  const make = () => {
    if (files.leaf) return files;
    files.leaf = leaf();
    files.root = pki.selfSigned('root', '/CN=Root');
    files.issued = pki.issue('issued', '/CN=api.example.com', files.root, ['subjectAltName=DNS:api.example.com']);
    const write = (name, data) => {
      fs.writeFileSync(path.join(directory, name), data);
      return path.join(directory, name);
    };
    files.paths = {
      'leaf.pem': files.leaf.certificateFile,
      'leaf.der': write('leaf.der', files.leaf.der),
      'chain.pem': write('chain.pem', files.issued.pem + files.root.pem),
      'chain.der': write('chain.der', Buffer.concat([files.issued.der, files.root.der])),
      'garbage.pem': write('garbage.pem', 'this is not a certificate\n'),
      'broken.pem': write('broken.pem', '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n'),
      'not-a-certificate.der': write('not-a-certificate.der', Buffer.from([0x30, 0x03, 0x02, 0x01, 0x00])),
      'missing.pem': path.join(directory, 'missing.pem'),
    };
    return files;
  };
  for (const [file, name] of [['leaf.pem', 'api.example.com'], ['leaf.der', 'www.example.com'], ['chain.pem', 'api.example.com'],
    ['chain.der', 'API.example.com'], ['garbage.pem', 'api.example.com'], ['broken.pem', 'api.example.com'],
    ['not-a-certificate.der', 'api.example.com'], ['missing.pem', 'api.example.com']]) {
    it(`${file} for ${name}`, { skip: binary === null && 'no Swift pinkeeper binary' }, async () => {
      const { paths, leaf: pinned, issued, root } = make();
      const testCase = {
        cache: {
          fingerprints: [
            { name: 'api.example.com', fingerprint: issued.fingerprint, expires: 2 },
            { name: 'api.example.com', fingerprint: root.fingerprint, expires: 2, depth: 1 },
            { name: 'www.example.com', fingerprint: pinned.fingerprint, expires: 2 },
          ],
          pinkeeper: { format: 1, store: STORE, source: 'https://pins.example.com/list', updated: 1, nextUpdate: 2 },
        },
        now: 1,
        question: { name, fingerprint: pinned.fingerprint },
      };
      const commands = prepare(testCase, workspace(), now() + 3600);
      const question = ['--name', name, '--certificate', paths[file]];
      const [swift, ours] = await Promise.all([
        runCommand(binary, [...commands.swift, ...question]),
        runCommand(process.execPath, [BIN, 'validate', ...commands.ours, ...question]),
      ]);
      assert.equal(ours.status, swift.status, `${JSON.stringify(swift)}\n${JSON.stringify(ours)}`);
      // With a certificate both print every line the same: subjects, fingerprints, expiry, note, verdict.
      assert.equal(ours.stdout, swift.stdout);
    });
  }
});
