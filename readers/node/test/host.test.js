'use strict';
// canonicalHost beyond the table's rows: IPv6 literals against libuv's inet_pton and inet_ntop
// (net.SocketAddress), IPv4 literals against net.isIPv4, the Punycode encoder against RFC 3492's
// own samples, and the one form as a fixed point, over many generated spellings.

const assert = require('node:assert/strict');
const crypto = require('node:crypto');
const net = require('node:net');
const { test } = require('node:test');
const { canonicalHost } = require('..');
const { punycode } = require('../lib/punycode');

const random = (below) => crypto.randomInt(below);
const pick = (list) => list[random(list.length)];

/** libuv's reading (inet_pton) and text (inet_ntop) of an IPv6 literal; null when it refuses it. */
function libuvIPv6(text) {
  try {
    return new net.SocketAddress({ address: text, family: 'ipv6' }).address;
  } catch {
    return null;
  }
}

/** Eight groups, zero more often than not, so that runs of zeros of every length come up. */
function randomGroups() {
  return Array.from({ length: 8 }, () => (random(3) === 0 ? random(0x10000) : 0));
}

/** One of the many ways to write `groups`: leading zeros, capitals, `::` over any zero run, a dotted tail. */
function spell(groups) {
  const hex = groups.map((group) => {
    const digits = group.toString(16).padStart(random(2) === 0 ? 4 : 1, '0');
    return random(2) === 0 ? digits.toUpperCase() : digits;
  });
  if (random(4) === 0) {
    hex.splice(6, 2, `${groups[6] >> 8}.${groups[6] & 255}.${groups[7] >> 8}.${groups[7] & 255}`);
  }
  const zeroRuns = [];
  for (let start = 0; start < hex.length; start++) {
    for (let end = start; end < hex.length && groups[end] === 0 && !hex[end].includes('.'); end++) zeroRuns.push([start, end + 1]);
  }
  if (zeroRuns.length === 0 || random(3) === 0) return hex.join(':');
  const [start, end] = pick(zeroRuns);
  return `${hex.slice(0, start).join(':')}::${hex.slice(end).join(':')}`;
}

/** Whether libuv writes these groups with a dotted part that RFC 5952 does not use (IPv4-compatible forms). */
function libuvWritesDottedOtherwise(groups) {
  const leadingZeros = groups.findIndex((group) => group !== 0);
  return leadingZeros === 6 || (leadingZeros === 7 && groups[7] !== 1);
}

test('IPv6 spellings of the same address have one form, RFC 5952 text as inet_ntop writes it', () => {
  for (let round = 0; round < 5000; round++) {
    const groups = randomGroups();
    const spelling = spell(groups);
    const expected = libuvIPv6(spelling);
    assert.notEqual(expected, null, spelling); // every generated spelling is one inet_pton reads
    assert.equal(canonicalHost(`[${spelling}]`), canonicalHost(spelling), spelling);
    if (libuvWritesDottedOtherwise(groups)) continue;
    assert.equal(canonicalHost(spelling), expected, spelling);
  }
  assert.equal(canonicalHost('::1.2.3.4'), '::102:304'); // inet_ntop writes ::1.2.3.4: no dotted part but ::ffff:a.b.c.d
});

test('an IPv6 literal is refused exactly where inet_pton refuses it', () => {
  const alphabet = ['0', '1', 'f', 'F', 'ffff', '00000', ':', ':', '::', '.', '1.2.3.4', '01.2.3.4', '256', 'g', ' '];
  for (let round = 0; round < 5000; round++) {
    const spelling = Array.from({ length: 1 + random(12) }, () => pick(alphabet)).join('');
    if (!spelling.includes(':')) continue;
    assert.equal(canonicalHost(spelling) !== null, libuvIPv6(spelling) !== null, JSON.stringify(spelling));
  }
  for (const zoned of ['fe80::1%eth0', 'fe80::1%1', '::1%', '[fe80::1%25eth0]']) assert.equal(canonicalHost(zoned), null, zoned);
});

test('a name of digits and dots is an IPv4 literal in one form exactly when net.isIPv4 reads it', () => {
  const parts = ['0', '1', '00', '01', '127', '255', '256', '0377', ''];
  for (let round = 0; round < 5000; round++) {
    const spelling = Array.from({ length: 1 + random(5) }, () => pick(parts)).join('.') + (random(6) === 0 ? '.' : '');
    const form = canonicalHost(spelling);
    assert.equal(form !== null, net.isIPv4(spelling), spelling);
    if (form !== null) assert.equal(form, spelling);
  }
});

test('Punycode as RFC 3492 section 7.1 encodes its samples', () => {
  const samples = [
    ['\u0644\u064a\u0647\u0645\u0627\u0628\u062a\u0643\u0644\u0645\u0648\u0634\u0639\u0631\u0628\u064a\u061f', 'egbpdaj6bu4bxfgehfvwxn'],
    ['\u4ed6\u4eec\u4e3a\u4ec0\u4e48\u4e0d\u8bf4\u4e2d\u6587', 'ihqwcrb4cv8a8dqg056pqjye'],
    ['Pro\u010dprost\u011bnemluv\u00ed\u010desky', 'Proprostnemluvesky-uyb24dma41a'],
    ['3\u5e74B\u7d44\u91d1\u516b\u5148\u751f', '3B-ww4c5e180e575a65lsy2b'],
    ['\u5b89\u5ba4\u5948\u7f8e\u6075-with-SUPER-MONKEYS', '-with-SUPER-MONKEYS-pc58ag80a8qai00g7n9n'],
    ['\u3072\u3068\u3064\u5c4b\u6839\u306e\u4e0b2', '2-u9tlzr9756bt3uc0v'],
    ['b\u00fccher', 'bcher-kva'],
  ];
  for (const [label, encoded] of samples) assert.equal(punycode(label), encoded, encoded);
  assert.equal(punycode('\u{1F600}'.repeat(300)), punycode('\u{1F600}'.repeat(300))); // long labels stay finite
});

test('the one form is its own one form, and a refused spelling stays refused', () => {
  const pieces = ['a', 'B', 'x', '0', '9', '0x', '-', '_', '*', '.', '.', ':', '[', ']', '%', 'ü', 'Ü', '\u212a', '\u3002', ' '];
  for (let round = 0; round < 5000; round++) {
    const spelling = Array.from({ length: 1 + random(10) }, () => pick(pieces)).join('');
    const form = canonicalHost(spelling);
    if (form === null) continue;
    assert.equal(canonicalHost(form), form, JSON.stringify(spelling));
    assert.ok(/^[\u0021-\u007e]+$/.test(form.replace(/ /g, '!')), JSON.stringify(form)); // ASCII only
    assert.ok(!/[A-Z]/.test(form), JSON.stringify(form));
  }
});
