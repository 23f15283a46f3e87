'use strict';
// Certificates made at test time with the openssl command line (Node cannot make certificates),
// in a temporary directory: EC P-256 keys, each certificate as PEM, DER and fingerprint.

const crypto = require('node:crypto');
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

class TestPki {
  constructor(directory) {
    this.directory = directory;
  }

  file(name) {
    return path.join(this.directory, name);
  }

  openssl(...args) {
    execFileSync('openssl', args, { stdio: ['ignore', 'ignore', 'pipe'] });
  }

  key(name) {
    const file = this.file(`${name}.key`);
    if (!fs.existsSync(file)) this.openssl('genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256', '-out', file);
    return file;
  }

  loaded(name) {
    const pem = fs.readFileSync(this.file(`${name}.pem`), 'latin1');
    const der = new crypto.X509Certificate(pem).raw;
    return {
      name,
      keyFile: this.file(`${name}.key`),
      key: fs.readFileSync(this.file(`${name}.key`)),
      certificateFile: this.file(`${name}.pem`),
      pem,
      der,
      fingerprint: crypto.createHash('sha256').update(der).digest('base64'),
    };
  }

  /** A self-signed certificate; `subject` in openssl's /CN=… form. */
  selfSigned(name, subject, extensions = ['basicConstraints=critical,CA:TRUE', 'keyUsage=critical,keyCertSign,cRLSign'], extra = []) {
    this.openssl('req', '-x509', '-new', '-key', this.key(name), '-subj', subject, '-days', '30', ...extra,
      ...extensions.flatMap((line) => ['-addext', line]), '-out', this.file(`${name}.pem`));
    return this.loaded(name);
  }

  /** A certificate for `subject` signed by `issuer`, with exactly the extension lines given. */
  issue(name, subject, issuer, extensions, extra = []) {
    const csr = this.file(`${name}.csr`);
    const extfile = this.file(`${name}.ext`);
    this.openssl('req', '-new', '-key', this.key(name), '-subj', subject, ...extra, '-out', csr);
    fs.writeFileSync(extfile, `${extensions.join('\n')}\n`);
    this.openssl('x509', '-req', '-in', csr, '-CA', issuer.certificateFile, '-CAkey', issuer.keyFile, '-set_serial',
      String(crypto.randomInt(1, 2 ** 47)), '-days', '30', '-extfile', extfile, '-out', this.file(`${name}.pem`));
    return this.loaded(name);
  }

  /** A CA certificate valid only in 2020: `openssl ca` is the command that takes explicit dates. */
  expiredCA(name, subject, issuer) {
    const database = this.file(`${name}.index`);
    fs.writeFileSync(database, '');
    const config = this.file(`${name}.cnf`);
    fs.writeFileSync(config, [
      '[ca]', 'default_ca = this', '[this]', `database = ${database}`, `new_certs_dir = ${this.directory}`,
      `serial = ${this.file(`${name}.serial`)}`, 'default_md = sha256', 'policy = any', 'unique_subject = no',
      'x509_extensions = extensions', '[any]', 'commonName = supplied', '[extensions]',
      'basicConstraints = critical,CA:TRUE', 'keyUsage = critical,keyCertSign,cRLSign', 'subjectKeyIdentifier = hash', '',
    ].join('\n'));
    fs.writeFileSync(this.file(`${name}.serial`), '1000\n');
    const csr = this.file(`${name}.csr`);
    this.openssl('req', '-new', '-key', this.key(name), '-subj', subject, '-out', csr);
    this.openssl('ca', '-batch', '-config', config, '-cert', issuer.certificateFile, '-keyfile', issuer.keyFile,
      '-startdate', '20200101000000Z', '-enddate', '20210101000000Z', '-in', csr, '-out', this.file(`${name}.pem`));
    return this.loaded(name);
  }
}

const CA = ['basicConstraints=critical,CA:TRUE', 'keyUsage=critical,keyCertSign,cRLSign'];
const SERVER = 'subjectAltName=DNS:api.example.com,DNS:localhost,IP:127.0.0.1';

/**
 * The certificates of the TLS tests: a trusted root and intermediate with leaves for
 * api.example.com (pinned, unpinned, one whose CN is unlisted.example, one without key
 * identifiers), a leaf for other.example.com, and another authority nobody trusts with its own
 * intermediate and leaf, an expired intermediate named like the trusted one and the trusted
 * root cross-signed by it.
 */
function makeTestPki(directory) {
  const pki = new TestPki(directory);
  const root = pki.selfSigned('root', '/CN=pinkeeper test root');
  const intermediate = pki.issue('intermediate', '/CN=pinkeeper test intermediate', root,
    [...CA, 'subjectKeyIdentifier=hash', 'authorityKeyIdentifier=keyid']);
  const leaf = (name, subject, san = SERVER, more = []) => pki.issue(name, subject, intermediate,
    [san, 'extendedKeyUsage=serverAuth', ...more]);
  const otherRoot = pki.selfSigned('other-root', '/CN=pinkeeper other root');
  fs.copyFileSync(root.keyFile, pki.file('root-cross-signed.key')); // the root's key and name, another issuer
  return {
    pki,
    root,
    intermediate,
    pinned: leaf('pinned', '/CN=api.example.com'),
    unpinned: leaf('unpinned', '/CN=api.example.com'),
    otherHost: leaf('other-host', '/CN=other.example.com', 'subjectAltName=DNS:other.example.com'),
    unlistedCommonName: leaf('unlisted-cn', '/CN=unlisted.example'),
    withoutKeyIdentifiers: leaf('without-key-ids', '/CN=api.example.com', SERVER,
      ['authorityKeyIdentifier=none', 'subjectKeyIdentifier=none']),
    otherRoot,
    otherIntermediate: pki.issue('other-intermediate', '/CN=pinkeeper other intermediate', otherRoot, [...CA, 'subjectKeyIdentifier=hash']),
    rogue: pki.issue('rogue', '/CN=api.example.com', otherRoot, [SERVER]),
    expiredNamesake: pki.expiredCA('expired-namesake', '/CN=pinkeeper test intermediate', otherRoot),
    rootCrossSigned: pki.issue('root-cross-signed', '/CN=pinkeeper test root', otherRoot,
      [...CA, 'subjectKeyIdentifier=hash', 'authorityKeyIdentifier=keyid']),
  };
}

module.exports = { TestPki, makeTestPki };
