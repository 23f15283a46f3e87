'use strict';
// All of the shared table Tests/Conformance/cases.json, played through this reader's library as
// its README says: every case's verdict and error code through real files, the one form of every
// host spelling, and the error codes with their kinds. The command line plays the table in
// command-conformance.test.js.

const assert = require('node:assert/strict');
const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');
const { test } = require('node:test');
const { CacheReader, CacheReaderError, ERROR_CODES, canonicalHost } = require('..');
const { STATUS_OF_KIND } = require('../lib/validate-command');
const { STORE, loadTable, versionOf, modeOf, publish, temporaryDirectory, writeFallback } = require('./support/cases');

const table = loadTable();

function ask(reader, testCase) {
  const { question, now } = testCase;
  // name is H as the client handed it over; common_name, when given, is N.
  const peer = { host: question.name, commonName: question.common_name ?? null };
  if ('fingerprint' in question) return reader.verdict(peer, Buffer.from(question.fingerprint, 'base64'), question.depth ?? 0, now);
  if ('verified_chain' in question) {
    return reader.verdictForChainDigests(peer, question.verified_chain.map((digest) => Buffer.from(digest, 'base64')), now);
  }
  const der = new crypto.X509Certificate(question.certificate_pem).raw;
  return reader.verdictForChain(peer, [der], now);
}

/** Whether `error` is this reader's refusal of a file with `code`. */
const refusedWith = (code) => (error) => {
  assert.ok(error instanceof CacheReaderError, String(error));
  assert.equal(error.code, code, error.message);
  assert.equal(error.kind, ERROR_CODES[code]);
  return true;
};

/** Plays the case in `directory`: the reader's answer to the last version, then its explicit re-read. */
function playIn(directory, testCase) {
  const fallbackFile = writeFallback(testCase, directory);
  const open = () => CacheReader.forStore(STORE, {
    cacheDirectory: directory, fallbackFile, expectedCommonNames: testCase.expected_common_names ?? null,
  });
  if (testCase.expected === 'error') {
    assert.throws(open, refusedWith(testCase.expected_error), testCase.rule);
    return;
  }
  const version = versionOf(testCase);
  const mode = modeOf(testCase.cache_mode, 0o644);
  let reader;
  if ('previous_cache' in testCase) {
    publish(directory, JSON.stringify(testCase.previous_cache));
    if (testCase.previous_cache_linked) {
      fs.linkSync(path.join(directory, `${STORE}.json`), path.join(directory, `${STORE}-backup.json`));
    }
    reader = open();
    ask(reader, testCase); // the previous version is read and answers
    if (version === null) fs.unlinkSync(path.join(directory, `${STORE}.json`));
    else publish(directory, version, STORE, mode);
  } else {
    // Opened before the version is written: an invalid first version is then a refused update,
    // not an error from the constructor (tested on its own below).
    reader = open();
    if (version !== null) publish(directory, version, STORE, mode);
  }
  assert.equal(ask(reader, testCase), testCase.expected, testCase.rule);
  if (testCase.expected_error === undefined) assert.doesNotThrow(() => reader.refresh(), testCase.rule);
  else assert.throws(() => reader.refresh(), refusedWith(testCase.expected_error), testCase.rule);
}

function play(testCase) {
  const directory = temporaryDirectory('pinkeeper-conformance-', modeOf(testCase.directory_mode, 0o755));
  try {
    playIn(directory, testCase);
  } finally {
    fs.rmSync(directory, { recursive: true, force: true });
  }
}

test('the table has cases, each id once, and every kind of question', () => {
  const { cases } = table;
  assert.ok(cases.length > 0);
  assert.equal(new Set(cases.map((testCase) => testCase.id)).size, cases.length);
  const kinds = new Set(cases.map(({ question }) => ['fingerprint', 'verified_chain', 'certificate_pem'].find((kind) => kind in question)));
  assert.deepEqual([...kinds].sort(), ['certificate_pem', 'fingerprint', 'verified_chain']);
});

for (const testCase of table.cases) {
  test(testCase.id, () => play(testCase));
}

test('the error codes are the table\'s, each of its kind and exit status', () => {
  const kinds = Object.fromEntries(Object.entries(table.error_codes).map(([code, { kind }]) => [code, kind]));
  assert.deepEqual({ ...ERROR_CODES }, kinds);
  for (const [code, { kind, status }] of Object.entries(table.error_codes)) {
    assert.equal(STATUS_OF_KIND[kind], status, code);
    assert.equal(new CacheReaderError(code, 'banking.json', 'is refused').kind, kind, code);
  }
  assert.throws(() => new CacheReaderError('unreadable', 'banking.json', 'is refused'), TypeError);
});

for (const row of table.host_spellings) {
  test(`host spelling ${row.id}`, () => {
    assert.equal(canonicalHost(row.spelling), row.host, JSON.stringify(row.spelling));
  });
}

test('an invalid first version is an error from the constructor, with its code', () => {
  const directory = temporaryDirectory('pinkeeper-conformance-');
  try {
    publish(directory, 'not json{');
    assert.throws(() => CacheReader.forStore(STORE, { cacheDirectory: directory }),
      (error) => refusedWith('not-json')(error) && /not valid JSON/.test(error.reason));
  } finally {
    fs.rmSync(directory, { recursive: true, force: true });
  }
});
