'use strict';
// Wultra fingerprint lists and pinkeeper cache files (docs/cache-format.md), type-checked field by
// field: a field of the wrong JSON type is an error naming its path, never a silent conversion.
// Members this reader does not know are ignored at every level.

const { PinListError } = require('./errors');
const { escaped, foldName } = require('./names');
const { parseStrictJSON, REPEATED } = require('./strict-json');

const FORMAT_VERSION = 1n;
/** The modes of docs/cache-format.md; no mode (or null) is read as "challenge". */
const MODES = Object.freeze(['static', 'challenge']);

/**
 * One pinned certificate: the SHA-256 of a certificate's DER bytes, trusted for `name` until
 * `expires` (Unix seconds, through that second), at `depth` in the verified chain (0 = leaf).
 * `expires` and `depth` are BigInts: the file may hold any 64-bit integer.
 * @typedef {{ name: string, key: string, fingerprint: Buffer, expires: bigint, depth: bigint }} Pin
 */

/**
 * Which names need pinning at all: the first entry listing a name decides, other names take
 * `sslPinningRequiredForUnlisted`.
 */
class DomainsConfig {
  constructor(requiredForUnlisted, domains) {
    this.sslPinningRequiredForUnlisted = requiredForUnlisted;
    this.domains = domains;
    this.byKey = new Map();
    for (const domain of domains) {
      const key = foldName(domain.name);
      if (!this.byKey.has(key)) this.byKey.set(key, domain.sslPinningRequired);
    }
  }

  /** Whether a peer known by the folded name `key` must match a pin. */
  requiredFor(key) {
    return this.byKey.has(key) ? this.byKey.get(key) : this.sslPinningRequiredForUnlisted;
  }
}

// Field access on a parsed document (Maps, arrays, BigInt integers).

function member(object, key, path, { required }) {
  const value = object.get(key);
  if (value === REPEATED) throw new PinListError(`${path} appears more than once`);
  if (value === undefined && required) throw new PinListError(`${path} is missing`);
  return value ?? undefined; // JSON null: as absent where optional, "not a …" where required
}

function asObject(value, path) {
  if (!(value instanceof Map)) throw new PinListError(`${path} is not an object`);
  return value;
}

function string(object, key, path) {
  const value = member(object, key, path, { required: true });
  if (typeof value !== 'string') throw new PinListError(`${path} is not a string`);
  return value;
}

/** A member that is a string, null or absent, given at most once. */
function optionalString(object, key, path) {
  const value = member(object, key, path, { required: false });
  if (value !== undefined && typeof value !== 'string') throw new PinListError(`${path} is not a string`);
  return value;
}

function integer(object, key, path, { required = true } = {}) {
  const value = member(object, key, path, { required });
  if (value === undefined && !required) return undefined;
  if (typeof value !== 'bigint') throw new PinListError(`${path} is not an integer`);
  return value;
}

function boolean(object, key, path) {
  const value = member(object, key, path, { required: true });
  if (typeof value !== 'boolean') throw new PinListError(`${path} is not a boolean`);
  return value;
}

function array(object, key, path) {
  const value = member(object, key, path, { required: true });
  if (!Array.isArray(value)) throw new PinListError(`${path} is not an array`);
  return value;
}

/**
 * 32 bytes from strict standard base64: 43 characters and one `=` (the unused low bits of the
 * last character are ignored). Buffer.from(…, 'base64') alone would also take URL-safe
 * characters, whitespace and missing padding. Null otherwise.
 * @param {string} text
 */
function decodeDigest(text) {
  if (!/^[A-Za-z0-9+/]{43}=$/.test(text)) return null;
  return Buffer.from(text, 'base64');
}

function entry(value, path) {
  const object = asObject(value, path);
  const name = string(object, 'name', `${path}.name`);
  const fingerprint = decodeDigest(string(object, 'fingerprint', `${path}.fingerprint`));
  if (fingerprint === null) throw new PinListError(`${path}.fingerprint is not the base64 of a 32-byte SHA-256 digest`);
  const expires = integer(object, 'expires', `${path}.expires`);
  const depth = integer(object, 'depth', `${path}.depth`, { required: false }) ?? 0n;
  if (depth < 0n) throw new PinListError(`${path}.depth is negative`);
  // Read by no verdict, but known to readers: checked so that no two readers take one file differently.
  optionalString(object, 'key', `${path}.key`);
  optionalString(object, 'signature', `${path}.signature`);
  return Object.freeze({ name, key: foldName(name), fingerprint, expires, depth });
}

function domainsConfig(value) {
  const object = asObject(value, 'domainsConfig');
  const unlisted = boolean(object, 'sslPinningRequiredForUnlisted', 'domainsConfig.sslPinningRequiredForUnlisted');
  optionalString(object, 'key', 'domainsConfig.key');
  const domains = array(object, 'domains', 'domainsConfig.domains').map((item, index) => {
    const path = `domainsConfig.domains[${index}]`;
    const domain = asObject(item, path);
    return {
      name: string(domain, 'name', `${path}.name`),
      sslPinningRequired: boolean(domain, 'sslPinningRequired', `${path}.sslPinningRequired`),
    };
  });
  return new DomainsConfig(unlisted, domains);
}

/** A parsed document as a Wultra list: `{ pins, domainsConfig }` (domainsConfig null when absent). */
function pinListFromDocument(document) {
  const root = asObject(document, 'the document');
  const pins = array(root, 'fingerprints', 'fingerprints').map((item, index) => entry(item, `fingerprints[${index}]`));
  const domains = member(root, 'domainsConfig', 'domainsConfig', { required: false });
  return { pins, domainsConfig: domains === undefined ? null : domainsConfig(domains) };
}

/**
 * Parses and checks a Wultra list (`{"fingerprints": [...], "domainsConfig": {...}}`).
 * @param {Uint8Array} data
 */
function parsePinList(data) {
  return pinListFromDocument(parseStrictJSON(data));
}

/**
 * One version of `<store>.json`: a Wultra list plus pinkeeper's `pinkeeper` metadata object.
 * In a cache whose mode is "static" only the signed part of each entry counts: a static list's
 * signatures cover `name&fingerprint&expires`, not `depth` or `domainsConfig`, so whoever could
 * alter the hosted list could have set those. A mode this reader does not know is refused when
 * the file is parsed (unsupported-format).
 */
class CacheFile {
  constructor(list, metadata) {
    this.pins = list.pins;
    this.domainsConfig = list.domainsConfig;
    this.metadata = metadata;
    const onlySigned = metadata.mode === 'static';
    /** The pins that take part in validation: in a static store only the depth-0 ones. */
    this.pinsInForce = onlySigned ? this.pins.filter((pin) => pin.depth === 0n) : this.pins;
    /** The domainsConfig that takes part in validation: none in a static store. */
    this.domainsConfigInForce = onlySigned ? null : this.domainsConfig;
  }

  /**
   * As every reader orders the refusals (Swift's decoder is the reference): a wrong type or value
   * anywhere (invalid-content) before a missing `pinkeeper` (missing-metadata), before a format or
   * mode this reader does not read (unsupported-format). A file of an unknown mode is refused
   * either way, never read as another mode.
   * @param {Uint8Array} data
   */
  static parse(data) {
    const document = parseStrictJSON(data);
    const root = asObject(document, 'the document');
    const list = pinListFromDocument(document);
    return new CacheFile(list, readMetadata(root));
  }
}

/** The `pinkeeper` object: missing-metadata without it, unsupported-format for a format or mode this reader does not read. */
function readMetadata(root) {
  const metadata = member(root, 'pinkeeper', 'pinkeeper', { required: false });
  if (metadata === undefined) throw new PinListError('the "pinkeeper" metadata object is missing', 'missing-metadata');
  asObject(metadata, 'pinkeeper');
  // Every member's type first: a wrong type is invalid-content whatever the format says.
  const read = Object.freeze({
    format: integer(metadata, 'format', 'pinkeeper.format'),
    store: string(metadata, 'store', 'pinkeeper.store'),
    source: string(metadata, 'source', 'pinkeeper.source'),
    updated: integer(metadata, 'updated', 'pinkeeper.updated'),
    nextUpdate: integer(metadata, 'nextUpdate', 'pinkeeper.nextUpdate'),
    mode: optionalString(metadata, 'mode', 'pinkeeper.mode') ?? null,
  });
  if (read.format !== FORMAT_VERSION) {
    throw new PinListError(`pinkeeper.format ${read.format} is not a format this reader reads (1)`, 'unsupported-format');
  }
  if (read.mode !== null && !MODES.includes(read.mode)) {
    throw new PinListError(
      `pinkeeper.mode '${escaped(read.mode)}' is not a mode this reader reads (static, challenge)`, 'unsupported-format');
  }
  return read;
}

module.exports = { CacheFile, DomainsConfig, parsePinList, decodeDigest };
