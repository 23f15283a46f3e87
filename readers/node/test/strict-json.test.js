'use strict';
// Strict JSON: the reason a document is refused, and what stays accepted. The conformance table
// covers each rule through the reader; these check the parser's own answers.

const assert = require('node:assert/strict');
const { test } = require('node:test');
const { PinListError } = require('..');
const { CacheFile } = require('../lib/pin-list');
const { parseStrictJSON, REPEATED, OUT_OF_RANGE } = require('../lib/strict-json');

const FINGERPRINT = 'AQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQE=';
const ENTRY = `"name": "a", "fingerprint": "${FINGERPRINT}", "expires": 1`;
const META = '"pinkeeper": {"format": 1, "store": "s", "source": "u", "updated": 1, "nextUpdate": 2}';

/** A cache document with `entry` as its one pin and `more` members before the metadata. */
const documentWith = (entry, more = '') => `{"fingerprints": [{${entry}}], ${more}${META}}`;

/** The code each reason is reported with: not-json for what is not JSON, invalid-content for what is not a cache file. */
function codeOf(reason) {
  const notJSON = new RegExp(['not valid JSON', 'lone surrogate', 'byte order mark', 'invalid UTF-8', 'raw control',
    'invalid (\\\\u )?escape', 'unterminated', 'more data', 'no document', 'nested'].join('|'));
  if (notJSON.test(reason)) return 'not-json';
  if (reason.startsWith('the "pinkeeper" metadata object')) return 'missing-metadata';
  if (/^pinkeeper\.(format \d|mode ')/.test(reason)) return 'unsupported-format';
  return 'invalid-content';
}

function refused(reason, text, code = codeOf(reason)) {
  const data = typeof text === 'string' ? Buffer.from(text, 'utf8') : text;
  assert.throws(() => CacheFile.parse(data),
    (error) => error instanceof PinListError && error.message.includes(reason) && error.code === code,
    `expected a refusal naming "${reason}" (${code})`);
}

test('a member the reader uses, given twice, is named', () => {
  refused('fingerprints[0].name appears more than once', documentWith(`"name": "b", ${ENTRY}`));
  refused('fingerprints[0].name appears more than once', documentWith(`"\\u006eame": "b", ${ENTRY}`));
  refused('fingerprints appears more than once', `{"fingerprints": [], "fingerprints": [], ${META}}`);
  refused('pinkeeper appears more than once', documentWith(ENTRY, '"pinkeeper": {}, '));
  refused('pinkeeper.mode appears more than once', documentWith(ENTRY).replace('"updated"', '"mode": null, "mode": null, "updated"'));
  refused('fingerprints[0].signature appears more than once', documentWith(`${ENTRY}, "signature": "x", "signature": "x"`));
  refused('domainsConfig.domains[0].name appears more than once', documentWith(ENTRY,
    '"domainsConfig": {"sslPinningRequiredForUnlisted": true, "domains": [{"name": "a", "name": "a", "sslPinningRequired": true}]}, '));
});

test('strings and bytes', () => {
  refused('a lone surrogate escape', documentWith(ENTRY, '"x": "\\ud800", '));
  refused('a lone surrogate escape', documentWith(ENTRY, '"\\udc00": 1, '));
  refused('a lone surrogate escape', documentWith(ENTRY, '"x": "\\ud83d😀", ')); // an escaped high half before a whole pair
  // A repeated member nobody reads is skipped, but each of its values is still checked.
  refused('a lone surrogate escape', documentWith(ENTRY, '"x": "\\ud800", "x": 1, '));
  refused('byte order mark', Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(documentWith(ENTRY))]));
  refused('invalid UTF-8', Buffer.concat([Buffer.from('{"x": "'), Buffer.from([0xf4, 0x90, 0x80, 0x80]), Buffer.from(`", ${META}}`)]));
  refused('invalid UTF-8', Buffer.concat([Buffer.from('{"x": "'), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from(`", ${META}}`)]));
  refused('a raw control character', documentWith(ENTRY, '"x": "a\u0001b", '));
  refused('an invalid escape', documentWith(ENTRY, '"x": "\\x41", '));
  refused('an invalid \\u escape', documentWith(ENTRY, '"x": "\\u12g4", '));
  refused('not valid JSON', documentWith(ENTRY, '"x": -Infinity, '));
  refused('not valid JSON', documentWith(ENTRY, '"x": NaN, '));
  refused('unterminated string', '{"x": "abc');
});

test('numbers, structure and nesting', () => {
  refused('pinkeeper.updated is not an integer', documentWith(ENTRY).replace('"updated": 1', '"updated": 1e0'));
  refused('fingerprints[0].expires is not an integer', documentWith(ENTRY.replace('"expires": 1', '"expires": 1.0')));
  refused('fingerprints[0].expires is not an integer', documentWith(ENTRY.replace('"expires": 1', `"expires": ${'9'.repeat(30)}`)));
  refused('fingerprints[0].expires is not an integer', documentWith(ENTRY.replace('"expires": 1', '"expires": 9223372036854775808')));
  refused('fingerprints[0].depth is not an integer', documentWith(`${ENTRY}, "depth": -0.0`));
  refused('not valid JSON', documentWith(ENTRY, '"x": 01, '));
  refused('not valid JSON', documentWith(ENTRY, '"x": 1., '));
  refused('not valid JSON', documentWith(ENTRY, '"x": +1, '));
  refused('not valid JSON', `{"fingerprints": [{${ENTRY}},], ${META}}`);
  refused('not valid JSON', `{"fingerprints": [{${ENTRY}}], ${META},}`);
  refused('more data after the document', `${documentWith(ENTRY)} {}`);
  refused('no document', ' \n');
  refused('nested deeper than 512 levels', documentWith(ENTRY, `"x": ${'['.repeat(512)}${']'.repeat(512)}, `));
  refused('nested deeper than 512 levels', documentWith(ENTRY, `"x": ${'{"a": ['.repeat(100000)}`));
});

test('what stays accepted', () => {
  const repeatedUnknown = documentWith(`"x": 1, "x": [2], ${ENTRY}`, '"x": "\\ud83d\\ude00", "x": {}, ');
  assert.equal(CacheFile.parse(Buffer.from(repeatedUnknown)).pins[0].name, 'a');
  const hugeUnknown = documentWith(ENTRY, `"x": ${'9'.repeat(900)}, "y": -0, "z": 1.5e300, `);
  assert.equal(CacheFile.parse(Buffer.from(hugeUnknown)).pins[0].expires, 1n);
  const deep = documentWith(`${ENTRY}, "depth": -0`, `"x": ${'['.repeat(511)}${']'.repeat(511)}, `);
  assert.equal(CacheFile.parse(Buffer.from(deep)).pins[0].depth, 0n);
  const lowBits = documentWith(ENTRY.replace(FINGERPRINT, 'AQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQF='));
  assert.deepEqual(CacheFile.parse(Buffer.from(lowBits)).pins[0].fingerprint, Buffer.alloc(32, 1));
  assert.equal(CacheFile.parse(Buffer.from(documentWith(ENTRY, '"__proto__": {"polluted": true}, '))).pins.length, 1);
  assert.equal({}.polluted, undefined);
});

test('the parsed values: Maps, BigInt integers, REPEATED and OUT_OF_RANGE markers', () => {
  const parsed = parseStrictJSON(Buffer.from('{"a": 1, "a": 2, "b": -9223372036854775808, "c": 9223372036854775808, '
    + '"d": [true, null, "\\/"], "e": 2.5}'));
  assert.ok(parsed instanceof Map);
  assert.equal(parsed.get('a'), REPEATED);
  assert.equal(parsed.get('b'), -(2n ** 63n));
  assert.equal(parsed.get('c'), OUT_OF_RANGE);
  assert.deepEqual(parsed.get('d'), [true, null, '/']);
  assert.equal(parsed.get('e'), 2.5);
});

test('fields of the wrong type are named', () => {
  refused('fingerprints[0].name is not a string', documentWith(ENTRY.replace('"name": "a"', '"name": null')));
  refused('fingerprints[0].fingerprint is not the base64 of a 32-byte SHA-256 digest',
    documentWith(ENTRY.replace(FINGERPRINT, FINGERPRINT.replace('=', ''))));
  refused('fingerprints[0].fingerprint is not the base64', documentWith(ENTRY.replace(FINGERPRINT, `${FINGERPRINT.slice(0, 42)}-_=`)));
  refused('fingerprints[0].depth is negative', documentWith(`${ENTRY}, "depth": -1`));
  refused('fingerprints[0].signature is not a string', documentWith(`${ENTRY}, "signature": 1`));
  refused('fingerprints[0] is not an object', `{"fingerprints": [1], ${META}}`);
  refused('fingerprints is missing', `{${META}}`);
  refused('domainsConfig.sslPinningRequiredForUnlisted is not a boolean',
    documentWith(ENTRY, '"domainsConfig": {"sslPinningRequiredForUnlisted": 1, "domains": []}, '));
  refused('the "pinkeeper" metadata object is missing', `{"fingerprints": [{${ENTRY}}]}`);
  refused('pinkeeper.store is not a string', documentWith(ENTRY).replace('"store": "s"', '"store": 1'));
  refused('pinkeeper.format 2 is not a format this reader reads', documentWith(ENTRY).replace('"format": 1', '"format": 2'));
  refused('pinkeeper.format is not an integer', documentWith(ENTRY).replace('"format": 1', '"format": "1"'));
  refused("pinkeeper.mode 'future-mode' is not a mode", documentWith(ENTRY).replace('"updated"', '"mode": "future-mode", "updated"'));
  refused('pinkeeper.mode is not a string', documentWith(ENTRY).replace('"updated"', '"mode": 1, "updated"'));
  refused('fingerprints[0].key is not a string', documentWith(`${ENTRY}, "key": 1`));
  refused('fingerprints[0].key appears more than once', documentWith(`${ENTRY}, "key": "a", "k\\u0065y": "b"`));
  refused('domainsConfig.key is not a string',
    documentWith(ENTRY, '"domainsConfig": {"sslPinningRequiredForUnlisted": true, "domains": [], "key": {}}, '));
  // A wrong type anywhere comes before a format this reader does not read, as in every reader
  // (the conformance table's refusal-order cases).
  refused('fingerprints is not an array', `{"fingerprints": 7, ${META.replace('"format": 1', '"format": 2')}}`);
  refused('the document is not an object', '[]');
  // null where a member is optional is as absent
  const nulls = documentWith(`${ENTRY}, "depth": null, "signature": null, "key": null`, '"domainsConfig": null, ');
  assert.equal(CacheFile.parse(Buffer.from(nulls)).domainsConfig, null);
  const keyed = documentWith(`${ENTRY}, "key": "k1"`,
    '"domainsConfig": {"sslPinningRequiredForUnlisted": true, "domains": [], "key": "k1"}, ');
  assert.equal(CacheFile.parse(Buffer.from(keyed)).pins.length, 1);
});
