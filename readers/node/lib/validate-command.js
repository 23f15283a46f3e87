'use strict';
// `pinkeeper-reader validate …`: the question, answer and exit status of `pinkeeper validate`.
// Exit status: 0 trusted, 1 untrusted, 2 empty, 64 usage error, 65 bad data (cache file or
// certificate content), 66 certificate file missing or unreadable, 74 cache file unreadable.

const fs = require('node:fs');
const { CacheReader, DEFAULT_CACHE_DIRECTORY, STORE_ID, sha256 } = require('./cache-reader');
const { commonName, notAfter, readCertificates, subjectRFC2253 } = require('./certificate');
const { CacheReaderError } = require('./errors');
const { describePeer, escaped, sameName } = require('./names');
const { decodeDigest } = require('./pin-list');
const { Verdict, EXIT_STATUS } = require('./validator');

const USAGE = `usage: pinkeeper-reader validate [--cache-directory DIR] --store ID --name HOST
           (--fingerprint B64 [--depth N] | --certificate FILE)
           [--fallback-file FILE] [--expected-common-name CN]...`;

const OPTIONS = {
  '--cache-directory': 'cacheDirectory',
  '--store': 'store',
  '--name': 'name',
  '--fingerprint': 'fingerprint',
  '--depth': 'depth',
  '--certificate': 'certificate',
  '--fallback-file': 'fallbackFile',
};

/** Ends the command with `status` after `message`. */
class Exit extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

const usage = (message) => new Exit(64, message);

/** 32 bytes from standard base64 (padded) or hex (colons allowed, as `openssl x509 -fingerprint` prints). */
function digest(text) {
  const base64 = decodeDigest(text);
  if (base64 !== null) return base64;
  const hex = text.replaceAll(':', '');
  return /^[0-9A-Fa-f]{64}$/.test(hex) ? Buffer.from(hex, 'hex') : null;
}

/** The options; null when help was asked for. */
function parse(args) {
  const given = { cacheDirectory: DEFAULT_CACHE_DIRECTORY, expectedNames: [] };
  for (let index = 1; index < args.length; index++) {
    let option = args[index];
    let value;
    const equals = option.indexOf('=');
    if (option.startsWith('--') && equals > 0) {
      value = option.slice(equals + 1);
      option = option.slice(0, equals);
    }
    if (option === '--help' || option === '-h') return null;
    if (!Object.hasOwn(OPTIONS, option) && option !== '--expected-common-name') throw usage(`unknown option '${option}'`);
    if (value === undefined) {
      if (index + 1 >= args.length) throw usage(`missing value for ${option}`);
      value = args[++index];
    }
    if (option === '--expected-common-name') given.expectedNames.push(value);
    else given[OPTIONS[option]] = value;
  }
  if (given.store === undefined) throw usage('missing --store');
  if (!STORE_ID.test(given.store)) throw usage(`--store must match [A-Za-z0-9][A-Za-z0-9._-]{0,63}, not '${given.store}'`);
  if (given.name === undefined) throw usage('missing --name');
  // Without a host only the certificate's own name would be left (PROTOCOL.md §5.1).
  if (given.name === '') throw usage('--name must be the host a client connects to, not empty');
  if ((given.fingerprint === undefined) === (given.certificate === undefined)) {
    throw usage('give exactly one of --fingerprint or --certificate');
  }
  if (given.depth !== undefined) {
    if (given.fingerprint === undefined) throw usage('--depth goes with --fingerprint (a chain\'s depths are its positions)');
    if (!/^[0-9]{1,15}$/.test(given.depth)) throw usage(`--depth must be 0 (leaf) or more, not '${given.depth}'`);
  }
  if (given.fingerprint !== undefined && digest(given.fingerprint) === null) {
    throw usage(`--fingerprint must be the base64 (or hex) of a 32-byte SHA-256 digest, not '${given.fingerprint}'`);
  }
  return given;
}

/** Unix seconds as ISO 8601 UTC without fractions, as the Swift command prints them. */
function iso(seconds) {
  const date = new Date(seconds * 1000);
  if (Number.isNaN(date.getTime())) return String(seconds);
  const two = (value) => String(value).padStart(2, '0');
  return `${date.getUTCFullYear()}-${two(date.getUTCMonth() + 1)}-${two(date.getUTCDate())}T`
    + `${two(date.getUTCHours())}:${two(date.getUTCMinutes())}:${two(date.getUTCSeconds())}Z`;
}

/**
 * The certificates of a file, leaf first. Like `pinkeeper validate --certificate`, this checks
 * an operator's file: it is no verified chain (a service uses the TLS helpers instead).
 */
function readChain(file) {
  let data;
  try {
    data = fs.readFileSync(file);
  } catch (error) {
    if (error.code === 'ENOENT') throw new Exit(66, `certificate file ${file} does not exist`);
    throw new Exit(66, `certificate file ${file} cannot be read (check its permissions)`);
  }
  try {
    return readCertificates(data);
  } catch (error) {
    throw new Exit(65, `certificate file ${file}: ${error.message}`);
  }
}

/** One line per certificate (what an operator needs to write a list entry), then a note on a differing common name. */
function describeChain(chain, name, leafName) {
  const lines = chain.map(({ der, certificate }, depth) => {
    const subject = subjectRFC2253(certificate);
    const fingerprint = sha256(der).toString('base64');
    const expires = notAfter(der);
    return `depth ${depth}: ${subject === '' ? '(empty subject)' : escaped(subject)}  sha256 ${fingerprint}`
      + (expires === null ? '' : `  expires ${expires} (${iso(expires)})`);
  });
  if (leafName !== null && !sameName(leafName, name)) {
    lines.push(`note: the leaf's common name '${escaped(leafName)}' differs from --name '${escaped(name)}': `
      + 'pins under either are compared, and pinning is skipped only if domainsConfig exempts both');
  }
  return lines;
}

function execute(given, print) {
  const { store, name } = given;
  let reader;
  try {
    reader = CacheReader.forStore(store, {
      cacheDirectory: given.cacheDirectory,
      fallbackFile: given.fallbackFile ?? null,
      expectedCommonNames: given.expectedNames.length > 0 ? given.expectedNames : null,
    });
  } catch (error) {
    if (!(error instanceof CacheReaderError)) throw error;
    throw new Exit(error.kind === 'invalid' ? 65 : 74, `store '${store}': ${error.message}`);
  }
  let names;
  let verdict;
  if (given.fingerprint !== undefined) {
    names = { host: name, commonName: null }; // no certificate: H alone
    verdict = reader.verdict(names, digest(given.fingerprint), Number(given.depth ?? 0));
  } else {
    const chain = readChain(given.certificate);
    let leafName = null;
    try {
      leafName = commonName(chain[0].der);
    } catch {
      // OpenSSL read it, this walk cannot: no N, H decides alone.
    }
    for (const line of describeChain(chain, name, leafName)) print(line);
    // The file stands for a verified chain: its leaf's common name is N.
    names = { host: name, commonName: leafName };
    verdict = reader.verdictForChain(names, chain.map(({ der }) => der));
  }
  const peer = describePeer(names);
  if (verdict === Verdict.TRUSTED) print('trusted');
  else if (verdict === Verdict.UNTRUSTED && !reader.admits(names)) {
    print(`untrusted: ${peer} is not among the expected_common_names of store '${store}'`);
  } else if (verdict === Verdict.UNTRUSTED) print(`untrusted: store '${store}' pins ${peer}, but not this certificate`);
  else print(`empty: store '${store}' has no valid pin for ${peer}; reject, and run \`pinkeeper update --store ${store}\``);
  return EXIT_STATUS[verdict];
}

/**
 * Runs the command line `args` (without the program) and returns its exit status; output goes
 * to `out` and `err` (objects with write(), by default the process's).
 */
function run(args, { out = process.stdout, err = process.stderr } = {}) {
  const print = (line) => out.write(`${line}\n`);
  try {
    if (args[0] === '--help' || args[0] === '-h') {
      print(USAGE);
      return 0;
    }
    if (args[0] !== 'validate') throw usage("the only command is 'validate'");
    const given = parse(args);
    if (given === null) {
      print(USAGE);
      return 0;
    }
    return execute(given, print);
  } catch (error) {
    if (!(error instanceof Exit)) throw error;
    err.write(`pinkeeper: ${error.message}\n${error.status === 64 ? `${USAGE}\n` : ''}`);
    return error.status;
  }
}

module.exports = { run, USAGE };
