'use strict';
// Every case of the shared table Tests/Conformance/cases.json, answered by this reader through
// real files, played as its README says.

const assert = require('node:assert/strict');
const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');
const { test } = require('node:test');
const { CacheReader, CacheReaderError } = require('..');
const { STORE, loadCases, versionOf, publish, temporaryDirectory } = require('./support/cases');

function ask(reader, testCase) {
  const { question, now } = testCase;
  // name is H, the verified host; common_name, when given, is N.
  const peer = { host: question.name, commonName: question.common_name ?? null };
  if ('fingerprint' in question) return reader.verdict(peer, Buffer.from(question.fingerprint, 'base64'), question.depth ?? 0, now);
  if ('verified_chain' in question) {
    return reader.verdictForChainDigests(peer, question.verified_chain.map((digest) => Buffer.from(digest, 'base64')), now);
  }
  const der = new crypto.X509Certificate(question.certificate_pem).raw;
  return reader.verdictForChain(peer, [der], now);
}

function play(testCase) {
  const directory = temporaryDirectory('pinkeeper-conformance-');
  try {
    let fallbackFile = null;
    if ('fallback' in testCase) {
      fallbackFile = path.join(directory, 'fallback.json');
      fs.writeFileSync(fallbackFile, JSON.stringify(testCase.fallback));
    }
    const open = () => CacheReader.forStore(STORE, {
      cacheDirectory: directory, fallbackFile, expectedCommonNames: testCase.expected_common_names ?? null,
    });
    const version = versionOf(testCase);
    if ('previous_cache' in testCase) {
      publish(directory, JSON.stringify(testCase.previous_cache));
      const reader = open();
      ask(reader, testCase); // the previous version is read and answers
      if (version === null) fs.unlinkSync(path.join(directory, `${STORE}.json`));
      else publish(directory, version);
      return ask(reader, testCase);
    }
    // Opened before the version is written: an invalid first version is then a refused update,
    // not an error from the constructor (tested on its own below).
    const reader = open();
    if (version !== null) publish(directory, version);
    return ask(reader, testCase);
  } finally {
    fs.rmSync(directory, { recursive: true, force: true });
  }
}

const cases = loadCases();

test('the table has cases, each id once, and every kind of question', () => {
  assert.ok(cases.length > 0);
  assert.equal(new Set(cases.map((testCase) => testCase.id)).size, cases.length);
  const kinds = new Set(cases.map(({ question }) => ['fingerprint', 'verified_chain', 'certificate_pem'].find((kind) => kind in question)));
  assert.deepEqual([...kinds].sort(), ['certificate_pem', 'fingerprint', 'verified_chain']);
});

for (const testCase of cases) {
  test(testCase.id, () => {
    assert.equal(play(testCase), testCase.expected, testCase.rule);
  });
}

test('an invalid first version is an error from the constructor', () => {
  const directory = temporaryDirectory('pinkeeper-conformance-');
  try {
    publish(directory, 'not json{');
    assert.throws(() => CacheReader.forStore(STORE, { cacheDirectory: directory }),
      (error) => error instanceof CacheReaderError && error.kind === 'invalid' && /not valid JSON/.test(error.reason));
  } finally {
    fs.rmSync(directory, { recursive: true, force: true });
  }
});
