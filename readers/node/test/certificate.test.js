'use strict';
// N (the leaf's most specific common name), notAfter and the subject as `pinkeeper validate`
// prints it, from certificates made by the openssl command line and from DER built here byte by
// byte (string types openssl does not write, invalid values).

const assert = require('node:assert/strict');
const { execFileSync } = require('node:child_process');
const { X509Certificate } = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');
const { test, after } = require('node:test');
const { commonName } = require('..');
const { notAfter, subjectRFC2253, readCertificates } = require('../lib/certificate');
const { temporaryDirectory } = require('./support/cases');
const { TestPki } = require('./support/pki');

const directory = temporaryDirectory('pinkeeper-certificates-');
after(() => fs.rmSync(directory, { recursive: true, force: true }));
const pki = new TestPki(directory);

/** A self-signed leaf for `subject` (openssl's /CN=… form), with openssl's `string_mask` when given. */
function made(name, subject, { mask, utf8 = true, multivalue = false } = {}) {
  const extra = [...(utf8 ? ['-utf8'] : []), ...(multivalue ? ['-multivalue-rdn'] : [])];
  if (mask) {
    const config = path.join(directory, `${name}.cnf`);
    fs.writeFileSync(config, `[req]\ndistinguished_name = dn\nstring_mask = ${mask}\n[dn]\n`);
    extra.push('-config', config);
  }
  return pki.selfSigned(name, subject, ['basicConstraints=CA:FALSE'], extra);
}

/** What openssl prints as the subject with pinkeeper validate's flags (RFC 2253, UTF-8 readable). */
function opensslSubject(certificate) {
  const output = execFileSync('openssl',
    ['x509', '-noout', '-subject', '-nameopt', 'RFC2253,-esc_msb', '-in', certificate.certificateFile]);
  return output.toString('utf8').replace(/\n$/, '').replace(/^subject=/, '');
}

test('N is the last common name in DER order, also inside a multi-valued RDN', () => {
  assert.equal(commonName(made('plain', '/CN=api.example.com/O=Example').der), 'api.example.com');
  assert.equal(commonName(made('two', '/CN=first.example/O=Example/CN=second.example').der), 'second.example');
  // A SET OF is sorted by encoding: the shorter "zzz" comes first, so API.bank.com is the last.
  assert.equal(commonName(made('multivalued', '/CN=zzz+CN=API.bank.com/O=Example', { multivalue: true }).der), 'API.bank.com');
  assert.equal(commonName(made('none', '/O=No Common Name').der), null);
});

test('N is read by its string type, as OpenSSL reads it', () => {
  assert.equal(commonName(made('utf8', '/CN=café.example', { mask: 'utf8only' }).der), 'café.example');
  assert.equal(commonName(made('bmp', '/CN=€uro.example', { mask: 'default' }).der), '€uro.example');
  assert.equal(commonName(made('t61', '/CN=café.example', { mask: 'nombstr' }).der), 'café.example');
  assert.equal(commonName(made('printable', '/CN=api.example.com', { utf8: false }).der), 'api.example.com');
});

// DER built by hand: a certificate as far as the subject (what commonName and notAfter read).
const tlv = (tag, ...parts) => {
  const body = Buffer.concat(parts.map((part) => Buffer.from(part)));
  const length = body.length < 0x80 ? [body.length]
    : body.length < 0x100 ? [0x81, body.length] : [0x82, body.length >> 8, body.length & 0xff];
  return Buffer.concat([Buffer.from([tag, ...length]), body]);
};
const CN = [0x06, 0x03, 0x55, 0x04, 0x03];
const attribute = (tag, bytes) => tlv(0x30, CN, tlv(tag, bytes));
function certificateWith(rdns, { notAfterTag = 0x17, notAfterText = '300101000000Z', version = true } = {}) {
  const validity = tlv(0x30, tlv(0x17, '200101000000Z'), tlv(notAfterTag, notAfterText));
  const tbs = tlv(0x30, ...(version ? [tlv(0xa0, tlv(0x02, [2]))] : []), tlv(0x02, [1]), tlv(0x30, [0x06, 0x01, 0x2a]), tlv(0x30),
    validity, tlv(0x30, ...rdns.map((values) => tlv(0x31, ...values))));
  return tlv(0x30, tbs, tlv(0x30, [0x06, 0x01, 0x2a]), tlv(0x03, [0]));
}

test('string types openssl does not write, and invalid values, which leave no N (not an earlier CN)', () => {
  const utf32 = Buffer.from([0, 0, 0, 0x61, 0, 1, 0xf6, 0x00]); // "a😀"
  assert.equal(commonName(certificateWith([[attribute(0x1c, utf32)]])), 'a\u{1f600}');
  for (const tag of [0x12, 0x13, 0x16, 0x1a]) {
    assert.equal(commonName(certificateWith([[attribute(tag, Buffer.from('api.example.com'))]])), 'api.example.com');
  }
  assert.equal(commonName(certificateWith([[attribute(0x13, Buffer.from([0x61, 0xe9]))]])), 'aé'); // one character per byte
  assert.equal(commonName(certificateWith([[attribute(0x0c, 'z.example')], [attribute(0x0c, 'a.example')]], { version: false })),
    'a.example');
  // As encoded, even unsorted.
  assert.equal(commonName(certificateWith([[attribute(0x0c, 'b.example'), attribute(0x0c, 'a.example')]])), 'a.example');
  const invalid = [
    [0x0c, [0xc3, 0x28]], // bad UTF-8
    [0x0c, [0xed, 0xa0, 0x80]], // an encoded surrogate
    [0x1e, [0xd8, 0x00]], // a lone surrogate in a BMPString
    [0x1e, [0x00]], // half a unit
    [0x1c, [0x00, 0x11, 0x00, 0x00]], // beyond U+10FFFF
    [0x1c, [0x00, 0x00, 0x61]], // not a multiple of four
    [0x04, [0x61]], // an OCTET STRING
  ];
  for (const [tag, bytes] of invalid) {
    assert.equal(commonName(certificateWith([[attribute(0x0c, 'earlier.example')], [attribute(tag, bytes)]])), null, `tag ${tag} ${bytes}`);
  }
  assert.throws(() => commonName(Buffer.from([0x30, 0x03, 0x02, 0x01, 0x00])));
});

test('notAfter as Unix seconds: UTCTime (50 to 49) and GeneralizedTime', () => {
  const leaf = made('dates', '/CN=dates.example');
  assert.equal(notAfter(leaf.der), Date.parse(new X509Certificate(leaf.pem).validTo) / 1000);
  assert.equal(notAfter(certificateWith([], { notAfterText: '491231235959Z' })), Date.UTC(2049, 11, 31, 23, 59, 59) / 1000);
  assert.equal(notAfter(certificateWith([], { notAfterText: '500101000000Z' })), Date.UTC(1950, 0, 1) / 1000);
  assert.equal(notAfter(certificateWith([], { notAfterTag: 0x18, notAfterText: '20500101000000Z' })), Date.UTC(2050, 0, 1) / 1000);
  assert.equal(notAfter(certificateWith([], { notAfterTag: 0x18, notAfterText: '20500101000000+0100' })), null);
});

test('the subject is printed as openssl prints it with RFC 2253 flags and UTF-8 left readable', () => {
  for (const [name, subject, multivalue] of [
    ['simple', '/CN=api.example.com', false],
    ['ordered', '/C=DE/O=Example, Inc./OU=Ops/CN=api.example.com', false],
    ['mixed', '/CN=zzz+CN=API.bank.com/O=Ex\\, Inc+OU=é ü/C=DE', true],
    ['specials', '/CN= lead\\+trail /O=a\\+b;c<d>"e"\\\\f#g+OU=#x', true],
  ]) {
    const certificate = made(name, subject, { multivalue });
    assert.equal(subjectRFC2253(new X509Certificate(certificate.pem)), opensslSubject(certificate), name);
  }
});

test('a certificate file: PEM blocks (others skipped) or concatenated DER, each parsed by OpenSSL', () => {
  const leaf = made('file-leaf', '/CN=leaf.example');
  const other = made('file-other', '/CN=other.example');
  const pem = Buffer.from(`junk\n${fs.readFileSync(leaf.keyFile, 'latin1')}${leaf.pem}text between\n${other.pem}`);
  assert.deepEqual(readCertificates(pem).map(({ der }) => der), [leaf.der, other.der]);
  assert.deepEqual(readCertificates(Buffer.concat([leaf.der, other.der])).map(({ der }) => der), [leaf.der, other.der]);
  for (const [data, reason] of [
    [Buffer.alloc(0), 'the input is empty'],
    [Buffer.from('this is not a certificate\n'), 'neither PEM nor DER'],
    [fs.readFileSync(leaf.keyFile), 'holds no CERTIFICATE block'],
    [Buffer.from('-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n'), 'PEM block 1: not a valid X.509 certificate'],
    [Buffer.from('-----BEGIN CERTIFICATE-----\nA!AA\n-----END CERTIFICATE-----\n'), 'PEM block 1 is not valid base64'],
    [Buffer.concat([leaf.der, Buffer.from([0x30, 0x05, 0x00])]), 'certificate 2 (at byte'],
    [Buffer.from([0x30, 0x03, 0x02, 0x01, 0x00]), 'certificate 1 (at byte 0): not a valid X.509 certificate'],
  ]) {
    assert.throws(() => readCertificates(data), (error) => error.message.includes(reason), reason);
  }
});
