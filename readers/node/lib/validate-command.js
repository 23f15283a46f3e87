'use strict';
// `pinkeeper-reader validate …`: the question, answer and exit status of `pinkeeper validate`
// (Tests/Conformance/README.md, `expected_command`). Standard output starts with the verdict word
// for statuses 0–2; otherwise the first line of standard error is `pinkeeper: <word>: …`, where
// the word is an error code of the file refused (errors.js) or `usage`.
// Exit status: 0 trusted, 1 untrusted, 2 empty, 64 usage error, 65 bad data (cache file or
// certificate content), 66 certificate file missing or unreadable, 74 cache file unreadable.
// It reads no configuration, so the pins and domainsConfig of a signing key removed from the
// daemon's configuration decide until the daemon drops them from the file; --help says so.

const fs = require('node:fs');
const { CacheReader, DEFAULT_CACHE_DIRECTORY, STORE_ID, sha256 } = require('./cache-reader');
const { commonName, notAfter, readCertificates, subjectRFC2253 } = require('./certificate');
const { CacheReaderError } = require('./errors');
const { canonicalHost } = require('./host');
const { describePeer, escaped, peerNames, sameName } = require('./names');
const { decodeDigest } = require('./pin-list');
const { Verdict, EXIT_STATUS } = require('./validator');

const USAGE = `usage: pinkeeper-reader validate [--cache-directory DIR] --store ID --name HOST
           (--fingerprint B64 [--depth N] | --certificate FILE)
           [--fallback-file FILE] [--expected-common-name CN]...`;

/**
 * What --help prints after the usage. What the daemon drops when a signing key leaves its
 * configuration cannot be told from the file: it names the key that verified each pin and
 * domainsConfig, not the keys still configured.
 */
const HELP = `${USAGE}

Answers trusted, untrusted or empty for a certificate of a host from the published cache, as
pinkeeper validate does. Reads no configuration: after a signing key is removed from the daemon's
configuration, its pins and its domainsConfig still decide here until the daemon drops them from
the file (when it starts or reloads, or at \`pinkeeper update\`); the file names the key that
verified each, not the keys still configured. \`pinkeeper validate\` without --cache-directory
counts only what the configured keys vouch for.
Exit status: 0 trusted; 1 untrusted; 2 empty (reject, and update the store); 64 usage error;
65 bad data; 66 certificate file missing or unreadable; 74 cache or fallback file unreadable.`;

/** The options that take one value, given at most once, and where parse() keeps them. */
const OPTIONS = {
  '--cache-directory': 'cacheDirectory',
  '--store': 'store',
  '--name': 'name',
  '--fingerprint': 'fingerprint',
  '--depth': 'depth',
  '--certificate': 'certificate',
  '--fallback-file': 'fallbackFile',
};
const EXPECTED_NAME = '--expected-common-name';

/** One to nine ASCII digits: no sign, separator, space or digit of another script. */
const DEPTH = /^[0-9]{1,9}$/;
const HEX_DIGEST = /^(?:[0-9A-Fa-f]{64}|[0-9A-Fa-f]{2}(?::[0-9A-Fa-f]{2}){31})$/;

/** The exit status of a refused file, by the kind of its error code. */
const STATUS_OF_KIND = Object.freeze({ invalid: 65, unreadable: 74 });

/** Ends the command with `status`; `word` starts the message (an error code or `usage`). */
class Exit extends Error {
  constructor(status, message, word = null) {
    super(word === null ? message : `${word}: ${message}`);
    this.status = status;
  }
}

const usage = (message) => new Exit(64, message, 'usage');

/**
 * 32 bytes from 44 characters of padded standard base64, or 64 hex digits, plain or as 32
 * colon-separated pairs (as `openssl x509 -fingerprint` prints them); null otherwise.
 */
function digest(text) {
  const base64 = decodeDigest(text);
  if (base64 !== null) return base64;
  return HEX_DIGEST.test(text) ? Buffer.from(text.replaceAll(':', ''), 'hex') : null;
}

/** The options and their values, in order: [option, value] pairs; null when help was asked for. */
function optionPairs(args) {
  const pairs = [];
  for (let index = 1; index < args.length; index++) {
    let option = args[index];
    let value;
    const equals = option.indexOf('=');
    if (option.startsWith('--') && equals > 0) {
      value = option.slice(equals + 1);
      option = option.slice(0, equals);
    }
    if (option === '--help' || option === '-h') return null;
    if (!Object.hasOwn(OPTIONS, option) && option !== EXPECTED_NAME) throw usage(`unknown option '${escaped(option)}'`);
    if (value === undefined) {
      if (index + 1 >= args.length) throw usage(`missing value for ${option}`);
      value = args[++index];
    }
    pairs.push([option, value]);
  }
  return pairs;
}

/** The options; null when help was asked for. */
function parse(args) {
  const pairs = optionPairs(args);
  if (pairs === null) return null;
  const given = { cacheDirectory: DEFAULT_CACHE_DIRECTORY, expectedNames: null };
  const seen = new Set();
  for (const [option, value] of pairs) {
    if (option === EXPECTED_NAME) {
      // Given at all, the list is in force; an empty value adds no name (one empty value: no name passes).
      given.expectedNames ??= [];
      if (value !== '') given.expectedNames.push(value);
      continue;
    }
    if (seen.has(option)) throw usage(`${option} is given more than once`);
    seen.add(option);
    given[OPTIONS[option]] = value;
  }
  checkQuestion(given);
  return given;
}

/** Refuses, as usage errors, a question the options do not ask exactly. */
function checkQuestion(given) {
  if (given.store === undefined) throw usage('missing --store');
  if (!STORE_ID.test(given.store)) throw usage(`--store must match [A-Za-z0-9][A-Za-z0-9._-]{0,63}, not '${escaped(given.store)}'`);
  if (given.name === undefined) throw usage('missing --name');
  // Without a host only the certificate's own name would be left (docs/protocol.md, "the host decides").
  if (given.name === '') throw usage('--name must be the host a client connects to, not empty');
  if ((given.fingerprint === undefined) === (given.certificate === undefined)) {
    throw usage('give exactly one of --fingerprint or --certificate');
  }
  if (given.depth !== undefined) {
    if (given.fingerprint === undefined) throw usage('--depth goes with --fingerprint (a chain\'s depths are its positions)');
    if (!DEPTH.test(given.depth)) throw usage(`--depth must be one to nine ASCII digits (0 is the leaf), not '${escaped(given.depth)}'`);
  }
  if (given.fingerprint !== undefined && digest(given.fingerprint) === null) {
    throw usage('--fingerprint must be the SHA-256 digest as 44 characters of padded standard base64 or 64 hex digits '
      + `(plain or as colon-separated pairs), not '${escaped(given.fingerprint)}'`);
  }
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

/** The store's reader; an Exit with the error code of a file it refuses. */
function openReader(given) {
  try {
    return CacheReader.forStore(given.store, {
      cacheDirectory: given.cacheDirectory,
      fallbackFile: given.fallbackFile ?? null,
      expectedCommonNames: given.expectedNames,
    });
  } catch (error) {
    if (!(error instanceof CacheReaderError)) throw error;
    throw new Exit(STATUS_OF_KIND[error.kind], `store '${given.store}': ${error.message}`, error.code);
  }
}

/** The line that starts with the verdict word, saying why. */
function verdictLine(verdict, names, reader, store) {
  const consulted = peerNames(names);
  const peer = describePeer(consulted);
  if (verdict === Verdict.TRUSTED) return 'trusted';
  if (consulted.host === null) {
    return `untrusted: ${peer} has no one spelling (docs/protocol.md, "H in one spelling"), so nothing is looked up for it`;
  }
  if (verdict === Verdict.UNTRUSTED && !reader.admits(names)) {
    return `untrusted: ${peer} is not among the expected_common_names of store '${store}'`;
  }
  if (verdict === Verdict.UNTRUSTED) return `untrusted: store '${store}' pins ${peer}, but not this certificate`;
  return `empty: store '${store}' has no valid pin for ${peer}; reject, and run \`pinkeeper update --store ${store}\``;
}

/**
 * Answers the question. The verdict line comes first, so that the first word of standard output
 * is the verdict; with a certificate file, one line per certificate and any note follow it.
 */
function execute(given, print) {
  const { store, name } = given;
  const reader = openReader(given);
  if (given.fingerprint !== undefined) {
    const names = { host: name, commonName: null }; // no certificate: H alone
    const verdict = reader.verdict(names, digest(given.fingerprint), Number(given.depth ?? 0));
    print(verdictLine(verdict, names, reader, store));
    return EXIT_STATUS[verdict];
  }
  const chain = readChain(given.certificate);
  let leafName = null;
  try {
    leafName = commonName(chain[0].der);
  } catch {
    // OpenSSL read it, this walk cannot: no N, H decides alone.
  }
  // The file stands for a verified chain: its leaf's common name is N.
  const names = { host: name, commonName: leafName };
  const verdict = reader.verdictForChain(names, chain.map(({ der }) => der));
  print(verdictLine(verdict, names, reader, store));
  for (const line of describeChain(chain, canonicalHost(name) ?? name, leafName)) print(line);
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
      print(HELP);
      return 0;
    }
    if (args[0] !== 'validate') throw usage("the only command is 'validate'");
    const given = parse(args);
    if (given === null) {
      print(HELP);
      return 0;
    }
    return execute(given, print);
  } catch (error) {
    if (!(error instanceof Exit)) throw error;
    err.write(`pinkeeper: ${error.message}\n${error.status === 64 ? `${USAGE}\n` : ''}`);
    return error.status;
  }
}

module.exports = { run, USAGE, STATUS_OF_KIND };
